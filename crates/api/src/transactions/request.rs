//! The body of `POST /v1/transactions`, parsed into the transaction asked for: every field
//! named on error, card data never in a log.

use std::collections::BTreeMap;
use std::fmt;

use holdfast_domain::ids::{MerchantId, TokenId, TxnId};
use holdfast_domain::metadata::Metadata;
use holdfast_domain::payment::amount::Amount;
use holdfast_domain::payment::card::CardInput;
use holdfast_domain::payment::labels::{Labels, Reference};
use holdfast_domain::payment::lifecycle::{FollowUp, TxnType};
use holdfast_domain::services::{NewPayment, PaymentSource, TransactionRequest};
use holdfast_web::error::ApiError;
use serde::Deserialize;

/// An auth or sale (`merchantId`, `amount`, `payment`), or a capture, void or refund of an
/// earlier transaction (`transactionId`, and `amount` for a partial capture or refund).
/// Its schema is `openapi::bodies::create_transaction`.
#[derive(Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub(super) struct CreateTransaction {
    /// `auth`, `sale`, `capture`, `void` or `refund`.
    #[serde(rename = "type")]
    kind: Option<String>,
    merchant_id: Option<String>,
    amount: Option<i64>,
    payment: Option<PaymentBody>,
    transaction_id: Option<String>,
    reference: Option<String>,
    metadata: Option<BTreeMap<String, String>>,
}

/// Card fields (`number`, `cvv`, `expiration` as MMYY, optionally `name`), or a `token`
/// (`tkn_…`), never both.
#[derive(Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PaymentBody {
    number: Option<String>,
    cvv: Option<String>,
    expiration: Option<String>,
    name: Option<String>,
    pub(crate) token: Option<String>,
}

crate::openapi::bodies::described_by!(
    CreateTransaction,
    crate::openapi::bodies::create_transaction
);

/// Card data must never reach a log, even by accident.
impl fmt::Debug for CreateTransaction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CreateTransaction")
            .field("type", &self.kind)
            .field("merchantId", &self.merchant_id)
            .field("amount", &self.amount)
            .field("transactionId", &self.transaction_id)
            .finish_non_exhaustive()
    }
}

impl fmt::Debug for PaymentBody {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PaymentBody")
            .field("token", &self.token)
            .finish_non_exhaustive()
    }
}

fn required<T>(value: Option<T>, field: &'static str) -> Result<T, ApiError> {
    value.ok_or_else(|| ApiError::invalid(field, "is required"))
}

fn absent<T>(value: Option<&T>, field: &'static str, kind: &str) -> Result<(), ApiError> {
    match value {
        Some(_) => Err(ApiError::invalid(
            field,
            format!("is not allowed on a {kind}"),
        )),
        None => Ok(()),
    }
}

/// Card fields or a token, never both.
fn source(body: PaymentBody) -> Result<PaymentSource, ApiError> {
    let card_fields = body.number.is_some()
        || body.cvv.is_some()
        || body.expiration.is_some()
        || body.name.is_some();
    match body.token {
        Some(_) if card_fields => Err(ApiError::invalid(
            "payment",
            "send either card fields (number, cvv, expiration, name) or a token, not both",
        )),
        Some(token) => Ok(PaymentSource::Token(TokenId::parse(
            "payment.token",
            &token,
        )?)),
        None => Ok(PaymentSource::Card(body.card_input())),
    }
}

impl PaymentBody {
    /// The card fields, for the service to check.
    pub(crate) fn card_input(self) -> CardInput {
        CardInput {
            number: self.number,
            cvv: self.cvv,
            expiration: self.expiration,
            name: self.name,
        }
    }
}

/// The reference and metadata asked for, checked.
fn labels(
    reference: Option<String>,
    metadata: Option<BTreeMap<String, String>>,
) -> Result<Labels, ApiError> {
    Ok(Labels {
        reference: reference
            .map(|raw| Reference::parse("reference", &raw))
            .transpose()?,
        metadata: metadata
            .map(Metadata::parse)
            .transpose()?
            .unwrap_or_default(),
    })
}

/// The transaction `body` asks for.
pub(super) fn parse(body: CreateTransaction) -> Result<TransactionRequest, ApiError> {
    let kind: TxnType = required(body.kind.as_deref(), "type")?
        .parse()
        .map_err(|_| {
            ApiError::invalid("type", "must be one of auth, sale, capture, void, refund")
        })?;
    match kind {
        TxnType::Auth | TxnType::Sale => {
            absent(body.transaction_id.as_ref(), "transactionId", kind.as_str())?;
            let merchant_id =
                MerchantId::parse("merchantId", &required(body.merchant_id, "merchantId")?)?;
            let amount = Amount::new("amount", required(body.amount, "amount")?)?;
            let source = source(required(body.payment, "payment")?)?;
            Ok(TransactionRequest::Payment(NewPayment {
                merchant_id,
                kind,
                amount,
                source,
                labels: labels(body.reference, body.metadata)?,
            }))
        }
        TxnType::Capture | TxnType::Void | TxnType::Refund => {
            absent(body.merchant_id.as_ref(), "merchantId", kind.as_str())?;
            absent(body.payment.as_ref(), "payment", kind.as_str())?;
            let original = TxnId::parse(
                "transactionId",
                &required(body.transaction_id, "transactionId")?,
            )?;
            let amount = body.amount.map(|a| Amount::new("amount", a)).transpose()?;
            let follow_up = match kind {
                TxnType::Capture => FollowUp::Capture(amount),
                TxnType::Refund => FollowUp::Refund(amount),
                _ => {
                    absent(amount.as_ref(), "amount", "void")?;
                    FollowUp::Void
                }
            };
            Ok(TransactionRequest::FollowUp {
                original,
                follow_up,
                labels: labels(body.reference, body.metadata)?,
            })
        }
    }
}
