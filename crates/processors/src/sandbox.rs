//! The sandbox processor: deterministic outcomes by test card number, so every path of a
//! payment integration can be exercised on purpose. It keeps no state: follow-ups (capture,
//! void, refund, reverse) of a sandbox transaction are always approved.

use std::time::Duration;

use holdfast_domain::payment::response_code::ResponseCode;
use holdfast_domain::payment::transaction::{AvsCode, CvvCode};
use holdfast_domain::ports::{ProcessorError, ProcessorOp, ProcessorReply, ProcessorRequest};

/// What a test card does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SandboxCard {
    Approve,
    /// Declines with this code and its usual message.
    Decline(ResponseCode),
    /// Approves half the amount (at least 1): `partial: true`.
    Partial,
    Avs(AvsCode),
    Cvv(CvvCode),
    /// The processor is unavailable (a retryable error: the plan's fallbacks are tried).
    ProcessorError,
    /// The processor never answers in time.
    Timeout,
}

/// The test card table (also in docs/testing.md; a test keeps the two in step).
pub const SANDBOX_CARDS: &[(&str, SandboxCard)] = &[
    ("4111111111111111", SandboxCard::Approve),
    ("5555555555554444", SandboxCard::Approve),
    ("378282246310005", SandboxCard::Approve),
    ("4000050000000007", SandboxCard::Approve),
    ("4000060000000006", SandboxCard::Approve),
    (
        "4000000000000101",
        SandboxCard::Decline(ResponseCode::DoNotHonor),
    ),
    (
        "4000000000000119",
        SandboxCard::Decline(ResponseCode::InsufficientFunds),
    ),
    (
        "4000000000000127",
        SandboxCard::Decline(ResponseCode::LostCard),
    ),
    (
        "4000000000000135",
        SandboxCard::Decline(ResponseCode::StolenCard),
    ),
    (
        "4000000000000143",
        SandboxCard::Decline(ResponseCode::ExpiredCard),
    ),
    ("4000000000000150", SandboxCard::ProcessorError),
    ("4000000000000168", SandboxCard::Timeout),
    ("4000000000000176", SandboxCard::Partial),
    ("4000000000000184", SandboxCard::Avs(AvsCode::AddressOnly)),
    ("4000000000000192", SandboxCard::Avs(AvsCode::PostalOnly)),
    ("4000000000000200", SandboxCard::Avs(AvsCode::NoMatch)),
    ("4000000000000218", SandboxCard::Avs(AvsCode::Unavailable)),
    ("4000000000000226", SandboxCard::Avs(AvsCode::Retry)),
    ("4000000000000234", SandboxCard::Cvv(CvvCode::NoMatch)),
    ("4000000000000242", SandboxCard::Cvv(CvvCode::Unsupported)),
];

/// How long the timeout card keeps the caller waiting: longer than any sane timeout.
const NEVER: Duration = Duration::from_hours(1);

#[derive(Debug, Clone, Copy, Default)]
pub struct Sandbox;

impl Sandbox {
    pub async fn call(&self, request: &ProcessorRequest) -> Result<ProcessorReply, ProcessorError> {
        let card = match &request.op {
            ProcessorOp::Authorize(card) | ProcessorOp::Sale(card) => card,
            ProcessorOp::Capture { .. }
            | ProcessorOp::Void { .. }
            | ProcessorOp::Refund { .. }
            | ProcessorOp::Reverse => {
                return Ok(reply(
                    request,
                    true,
                    request.amount,
                    AvsCode::Unavailable,
                    CvvCode::NotProcessed,
                    ResponseCode::Approved,
                ));
            }
        };
        let behaviour = SANDBOX_CARDS
            .iter()
            .find(|(number, _)| *number == card.number.expose())
            .map_or(SandboxCard::Approve, |(_, b)| *b);
        // No CVV sent (a token): not processed, whatever the card.
        let cvv = |code| {
            if card.cvv.is_some() {
                code
            } else {
                CvvCode::NotProcessed
            }
        };
        match behaviour {
            SandboxCard::Approve => Ok(reply(
                request,
                true,
                request.amount,
                AvsCode::FullMatch,
                cvv(CvvCode::Match),
                ResponseCode::Approved,
            )),
            SandboxCard::Partial => {
                let half = (request.amount / 2).max(1);
                Ok(reply(
                    request,
                    true,
                    half,
                    AvsCode::FullMatch,
                    cvv(CvvCode::Match),
                    ResponseCode::PartialApproval,
                ))
            }
            SandboxCard::Avs(avs) => Ok(reply(
                request,
                true,
                request.amount,
                avs,
                cvv(CvvCode::Match),
                ResponseCode::Approved,
            )),
            SandboxCard::Cvv(code) => Ok(reply(
                request,
                true,
                request.amount,
                AvsCode::FullMatch,
                cvv(code),
                ResponseCode::Approved,
            )),
            SandboxCard::Decline(code) => Ok(reply(
                request,
                false,
                0,
                AvsCode::FullMatch,
                cvv(CvvCode::Match),
                code,
            )),
            SandboxCard::ProcessorError => Err(ProcessorError::Unavailable(
                "sandbox: simulated processor error".into(),
            )),
            SandboxCard::Timeout => {
                tokio::time::sleep(NEVER).await;
                Err(ProcessorError::Timeout)
            }
        }
    }
}

fn reply(
    request: &ProcessorRequest,
    approved: bool,
    approved_amount: i64,
    avs: AvsCode,
    cvv: CvvCode,
    code: ResponseCode,
) -> ProcessorReply {
    ProcessorReply {
        approved,
        approved_amount,
        avs,
        cvv,
        code: code.as_str().to_owned(),
        decline: (!approved).then(|| ResponseCode::decline(code.as_str())),
        message: code.message().to_owned(),
        // Derived from our id: the same request always names the same sandbox transaction.
        processor_transaction_id: format!(
            "sbx_{}",
            request.reference.as_str().trim_start_matches("txn_")
        ),
        // The sandbox decides at once, follow-ups included.
        submitted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use holdfast_domain::ids::TxnId;
    use holdfast_domain::merchant::Currency;
    use holdfast_domain::payment::card::{CardNumber, Cvv, Expiration, luhn_valid};
    use holdfast_domain::ports::CardData;
    use time::macros::datetime;

    fn authorize(number: &str, cvv: bool) -> ProcessorRequest {
        ProcessorRequest {
            op: ProcessorOp::Authorize(CardData {
                number: CardNumber::parse(number).unwrap(),
                cvv: cvv.then(|| Cvv::parse("123").unwrap()),
                expiration: Expiration::parse("1230", datetime!(2026-11-22 0:00 UTC)).unwrap(),
                wallet: None,
                name: None,
            }),
            amount: 1001,
            currency: Currency::USD,
            reference: TxnId::from_suffix("01ABC"),
        }
    }

    #[test]
    fn every_test_card_is_luhn_valid_and_listed_once() {
        for (i, (number, _)) in SANDBOX_CARDS.iter().enumerate() {
            assert!(luhn_valid(number), "{number}");
            assert!(
                SANDBOX_CARDS[i + 1..].iter().all(|(n, _)| n != number),
                "{number} twice"
            );
        }
    }

    #[test]
    fn the_documented_table_lists_every_test_card() {
        let doc = include_str!("../../../docs/testing.md");
        for (number, _) in SANDBOX_CARDS {
            assert!(
                doc.contains(&format!("| {number} |")),
                "{number} is missing from docs/testing.md"
            );
        }
    }

    #[tokio::test]
    async fn each_card_does_what_the_table_says() {
        for (number, behaviour) in SANDBOX_CARDS {
            if *behaviour == SandboxCard::Timeout {
                continue;
            }
            let got = Sandbox.call(&authorize(number, true)).await;
            match behaviour {
                SandboxCard::Approve => {
                    let r = got.unwrap();
                    assert!(
                        r.approved
                            && r.approved_amount == 1001
                            && r.avs == AvsCode::FullMatch
                            && r.cvv == CvvCode::Match,
                        "{number}"
                    );
                }
                SandboxCard::Partial => {
                    let r = got.unwrap();
                    assert!(r.approved && r.approved_amount == 500, "{number}");
                }
                SandboxCard::Avs(code) => assert_eq!(got.unwrap().avs, *code, "{number}"),
                SandboxCard::Cvv(code) => assert_eq!(got.unwrap().cvv, *code, "{number}"),
                SandboxCard::Decline(code) => {
                    let r = got.unwrap();
                    assert!(
                        !r.approved && r.code == code.as_str() && r.approved_amount == 0,
                        "{number}"
                    );
                }
                SandboxCard::ProcessorError => {
                    assert!(matches!(got, Err(ProcessorError::Unavailable(_))));
                }
                SandboxCard::Timeout => unreachable!(),
            }
        }
    }

    #[tokio::test]
    async fn no_cvv_is_not_processed_and_ids_are_stable() {
        let r = Sandbox
            .call(&authorize("4111111111111111", false))
            .await
            .unwrap();
        assert_eq!(r.cvv, CvvCode::NotProcessed);
        assert_eq!(r.processor_transaction_id, "sbx_01ABC");
    }

    #[tokio::test]
    async fn the_timeout_card_is_cut_by_the_configured_timeout() {
        use holdfast_domain::ids::{ConnectionId, PlatformId};
        use holdfast_domain::mode::Mode;
        use holdfast_domain::payment::routing::{ProcessorAccount, ProcessorConnection};
        use holdfast_domain::ports::Processor;
        let connection = ProcessorConnection {
            id: ConnectionId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            name: "Sandbox".into(),
            account: ProcessorAccount::Sandbox,
            created_on: datetime!(2026-01-01 0:00 UTC),
        };
        let processors = crate::Processors::new(Duration::from_millis(50));
        let got = processors
            .call(&connection, &authorize("4000000000000168", true))
            .await;
        assert_eq!(got, Err(ProcessorError::Timeout));
    }
}
