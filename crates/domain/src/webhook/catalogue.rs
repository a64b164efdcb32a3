//! The event catalogue: every event type a subscription may name, defined once. The list,
//! `GET /v1/webhooks/event-types` and `docs/webhooks.md` all come from here.

use crate::Invalid;

crate::words! {
    /// A kind of event a webhook subscription can ask to be notified of (spec 6.1).
    #[derive(PartialOrd, Ord, strum::Display)]
    pub enum EventType {
        /// `transaction.created`: a transaction of any type and outcome was recorded.
        #[strum(serialize = "transaction.created")]
        TransactionCreated,
        /// `transaction.updated`: a processor decided a capture, void or refund it had taken.
        #[strum(serialize = "transaction.updated")]
        TransactionUpdated,
        /// `merchant.created`: a merchant was created.
        #[strum(serialize = "merchant.created")]
        MerchantCreated,
        /// `merchant.updated`: a merchant was changed.
        #[strum(serialize = "merchant.updated")]
        MerchantUpdated,
        /// `merchant.deleted`: a merchant was deleted.
        #[strum(serialize = "merchant.deleted")]
        MerchantDeleted,
        /// `loan.created`: a loan was offered to a merchant.
        #[strum(serialize = "loan.created")]
        LoanCreated,
        /// `loan.updated`: a past-due loan is back in good standing.
        #[strum(serialize = "loan.updated")]
        LoanUpdated,
        /// `loan.accepted`: a loan's offer was accepted.
        #[strum(serialize = "loan.accepted")]
        LoanAccepted,
        /// `loan.paid_out`: a loan's advance was paid out.
        #[strum(serialize = "loan.paid_out")]
        LoanPaidOut,
        /// `loan.repayment`: a settlement run withheld a repayment, or one was made early.
        #[strum(serialize = "loan.repayment")]
        LoanRepayment,
        /// `loan.repaid`: nothing is outstanding on a loan.
        #[strum(serialize = "loan.repaid")]
        LoanRepaid,
        /// `loan.past_due`: less was repaid than a loan's minimums due.
        #[strum(serialize = "loan.past_due")]
        LoanPastDue,
        /// `loan.expired`: a loan's offer ended unaccepted.
        #[strum(serialize = "loan.expired")]
        LoanExpired,
        /// `loan.canceled`: a loan was canceled before its advance was paid out.
        #[strum(serialize = "loan.canceled")]
        LoanCanceled,
        /// `loan.charged_off`: the operator wrote off what a loan still owed.
        #[strum(serialize = "loan.charged_off")]
        LoanChargedOff,
        /// `form.created`: a boarding form was created.
        #[strum(serialize = "form.created")]
        FormCreated,
        /// `form.completed`: a boarding form was submitted.
        #[strum(serialize = "form.completed")]
        FormCompleted,
        /// `compliance.created`: a merchant's yearly compliance form was issued.
        #[strum(serialize = "compliance.created")]
        ComplianceCreated,
        /// `compliance.updated`: a compliance form was attested, or became overdue.
        #[strum(serialize = "compliance.updated")]
        ComplianceUpdated,
        /// `balance.available`: a settlement run made a merchant's pending money available.
        #[strum(serialize = "balance.available")]
        BalanceAvailable,
        /// `payout.created`: a payout of a merchant's available money was made.
        #[strum(serialize = "payout.created")]
        PayoutCreated,
        /// `payout.paid`: the bank paid a payout into the merchant's account.
        #[strum(serialize = "payout.paid")]
        PayoutPaid,
        /// `payout.failed`: the bank refused or returned a payout; its money is available again.
        #[strum(serialize = "payout.failed")]
        PayoutFailed,
        /// `payout.canceled`: a pending payout was canceled; its money is available again.
        #[strum(serialize = "payout.canceled")]
        PayoutCanceled,
        /// `webhook.test`: a test asked for with `POST /v1/webhooks/{id}/test`, sent to that
        /// subscription only.
        #[strum(serialize = "webhook.test")]
        WebhookTest,
    }
}

impl EventType {
    /// What the event reports, and the shape of its `data`.
    pub fn description(self) -> &'static str {
        match self {
            Self::TransactionCreated => {
                "A transaction of any type and outcome was recorded. data: the transaction object."
            }
            Self::TransactionUpdated => {
                "A processor decided a capture, void or refund it had taken (state processing): it is now settled or failed. data: the transaction object."
            }
            Self::MerchantCreated => "A merchant was created. data: the merchant object.",
            Self::MerchantUpdated => {
                "A merchant was changed. data: the merchant object as it now is."
            }
            Self::MerchantDeleted => r#"A merchant was deleted. data: {"id", "deleted": true}."#,
            Self::LoanCreated => "A loan was offered to a merchant. data: the loan object.",
            Self::LoanUpdated => {
                "A past-due loan's shortfall was made up: it is paid_out again. data: the loan object."
            }
            Self::LoanAccepted => {
                "A loan's offer was accepted, by the merchant on its page or by the platform with the merchant's consent. data: the loan object, with acceptance."
            }
            Self::LoanPaidOut => {
                "A loan's advance was lent and a payout (method loan) is taking it to the merchant's bank. data: the loan object, with payoutId."
            }
            Self::LoanRepayment => {
                "A settlement run withheld a share of a merchant's net for its loan (one per run), or the loan was repaid early. data: {repayment, loan}."
            }
            Self::LoanRepaid => "Nothing is outstanding on a loan. data: the loan object.",
            Self::LoanPastDue => {
                "Less was repaid on a loan than its minimums due by now. data: the loan object."
            }
            Self::LoanExpired => "A loan's offer ended unaccepted. data: the loan object.",
            Self::LoanCanceled => {
                "A loan was canceled before its advance was paid out. data: the loan object."
            }
            Self::LoanChargedOff => {
                "The operator wrote off what a loan still owed. data: the loan object."
            }
            Self::FormCreated => {
                "A boarding form was created. data: {id, merchantId, status, submittedOn: null}."
            }
            Self::FormCompleted => {
                "A boarding form was submitted. data: {id, merchantId, status, submittedOn}."
            }
            Self::ComplianceCreated => {
                "A merchant's compliance form was issued. data: {id, merchantId, status, dueOn, attestedOn: null}."
            }
            Self::ComplianceUpdated => {
                "A compliance form was attested or became overdue. data: {id, merchantId, status, dueOn, attestedOn}."
            }
            Self::BalanceAvailable => {
                "A settlement run moved a merchant's settled charges from pending to available, once per merchant and run. data: {merchantId, settlementRunId, settled: [{currency, amount, transactions}]}."
            }
            Self::PayoutCreated => {
                "A payout took an amount of a merchant's available balance to in transit, on its way to the merchant's bank. data: the payout object."
            }
            Self::PayoutPaid => {
                "The bank paid a payout into the merchant's account. data: the payout object."
            }
            Self::PayoutFailed => {
                "The bank refused or returned a payout (an ACH return, even after it was paid): its amount is available again. data: the payout object, with failure {code, message}."
            }
            Self::PayoutCanceled => {
                "A payout was canceled while pending: its amount is available again. data: the payout object."
            }
            Self::WebhookTest => {
                "A test asked for with POST /v1/webhooks/{id}/test, sent to that subscription only, whether or not it names this type. data: {webhookId, message}."
            }
        }
    }

    /// Only transaction notifications may be resent (spec 6.4).
    pub fn is_transaction(self) -> bool {
        self.as_str().starts_with("transaction.")
    }

    /// Reads an event type by its exact dotted name, refusing anything else under `field`.
    pub fn parse(field: &'static str, raw: &str) -> Result<Self, Invalid> {
        raw.parse().map_err(|_| {
            Invalid::new(
                field,
                "is not an event type; see GET /v1/webhooks/event-types",
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_of_spec_6_1_and_only_transactions_resend() {
        assert_eq!(
            EventType::ALL
                .iter()
                .copied()
                .map(EventType::as_str)
                .collect::<Vec<_>>(),
            [
                "transaction.created",
                "transaction.updated",
                "merchant.created",
                "merchant.updated",
                "merchant.deleted",
                "loan.created",
                "loan.updated",
                "loan.accepted",
                "loan.paid_out",
                "loan.repayment",
                "loan.repaid",
                "loan.past_due",
                "loan.expired",
                "loan.canceled",
                "loan.charged_off",
                "form.created",
                "form.completed",
                "compliance.created",
                "compliance.updated",
                "balance.available",
                "payout.created",
                "payout.paid",
                "payout.failed",
                "payout.canceled",
                "webhook.test",
            ]
        );
        for &t in EventType::ALL {
            assert_eq!(t.as_str().parse::<EventType>(), Ok(t));
            assert_eq!(
                t.is_transaction(),
                matches!(
                    t,
                    EventType::TransactionCreated | EventType::TransactionUpdated
                ),
                "{t}"
            );
        }
        assert!(EventType::parse("events", "transaction.deleted").is_err());
        assert!(EventType::parse("events", "Transaction.Created").is_err());
    }
}
