//! Where a payout goes: the bank account of the merchant's newest approved boarding form (in
//! test mode, without one, the sandbox bank's paying account), and whether the live rail can
//! pay it.

use super::PayoutService;
use crate::boarding::form::BoardingForm;
use crate::ids::{BoardingFormId, MerchantId};
use crate::merchant::Currency;
use crate::mode::Mode;
use crate::payout::{Payout, SANDBOX_PAYING_ACCOUNT};
use crate::ports::StoreError;
use crate::scope::Scope;
use crate::services::ServiceError;
use crate::services::boarding::{BANK_ACCOUNT, vault_context};

impl PayoutService {
    /// The bank account a payout of `merchant` in `currency` goes to: its newest approved
    /// boarding form's and the account's last four digits (in test mode, without one, the
    /// sandbox bank's paying account). Refused in live mode unless the live rail can pay it.
    pub async fn bank_account(
        &self,
        scope: &Scope,
        merchant: &MerchantId,
        currency: Currency,
    ) -> Result<(Option<BoardingFormId>, String), ServiceError> {
        let form = self
            .forms
            .payout_account(scope, merchant)
            .await
            .map_err(ServiceError::Store)?
            .filter(|form| form.bank_account.is_some());
        if scope.mode == Mode::Live {
            live_rail_takes(currency, form.as_ref())?;
        }
        Ok(
            match form.and_then(|form| form.bank_account.map(|account| (form.id, account.last4))) {
                Some((form, last4)) => (Some(form), last4),
                None => (None, sandbox_last4()),
            },
        )
    }

    /// The account number a payout goes to, opened from its boarding form.
    pub(super) async fn account_number(&self, payout: &Payout) -> Result<String, StoreError> {
        let Some(form) = &payout.bank_form else {
            return Ok(SANDBOX_PAYING_ACCOUNT.to_owned());
        };
        let scope = Scope::new(payout.platform_id.clone(), payout.mode);
        let sealed = self
            .forms
            .get_form(&scope, form)
            .await?
            .and_then(|form| form.bank_account)
            .ok_or_else(|| StoreError::Unexpected(format!("{form}: no bank account")))?;
        self.vault
            .open(&vault_context(form, BANK_ACCOUNT), &sealed.sealed)
            .map_err(|e| StoreError::Unexpected(format!("{form}: bank account: {e}")))
    }
}

/// Refused unless the live rail can pay a payout in `currency` to `form`'s account: ACH pays
/// US accounts, in USD.
fn live_rail_takes(currency: Currency, form: Option<&BoardingForm>) -> Result<(), ServiceError> {
    let refused = |field, message: &str| {
        Err(ServiceError::Conflict {
            field,
            message: message.into(),
        })
    };
    if currency != Currency::USD {
        return refused("currency", "live payouts go by ACH, in USD only");
    }
    match form {
        None => refused(
            "merchantId",
            "has no bank account: its boarding form must be approved first",
        ),
        Some(form) if form.answers.routing_number.is_none() => refused(
            "merchantId",
            "its bank account is not a US account: live payouts go by ACH to US accounts only",
        ),
        Some(_) => Ok(()),
    }
}

/// The last four digits the sandbox paying account shows.
fn sandbox_last4() -> String {
    SANDBOX_PAYING_ACCOUNT[SANDBOX_PAYING_ACCOUNT.len() - 4..].to_owned()
}
