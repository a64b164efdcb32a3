//! A processor connection's account as its `account` column keeps it: JSON, each secret as
//! `Sealed::to_text` writes it (ciphertext only) beside its last four characters. NULL is the
//! sandbox, which has nothing to keep.

use holdfast_domain::payment::adyen::{AdyenAccount, SealedSecret};
use holdfast_domain::payment::routing::{ProcessorAccount, ProcessorKind};
use holdfast_domain::ports::{Sealed, StoreError};
use serde::{Deserialize, Serialize};

use crate::rows::corrupt;

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AdyenColumn {
    merchant_account: String,
    checkout_url: String,
    api_key: SecretColumn,
    hmac_key: SecretColumn,
    notification_username: String,
    notification_password: SecretColumn,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretColumn {
    sealed: String,
    last4: String,
}

impl From<&SealedSecret> for SecretColumn {
    fn from(secret: &SealedSecret) -> Self {
        Self {
            sealed: secret.sealed.to_text(),
            last4: secret.last4.clone(),
        }
    }
}

impl TryFrom<SecretColumn> for SealedSecret {
    type Error = StoreError;
    fn try_from(column: SecretColumn) -> Result<Self, StoreError> {
        Ok(Self {
            sealed: Sealed::from_text(&column.sealed)
                .ok_or_else(|| corrupt("account", "a secret is not sealed"))?,
            last4: column.last4,
        })
    }
}

/// The `account` column of a connection's row.
pub fn account_column(account: &ProcessorAccount) -> Option<String> {
    match account {
        ProcessorAccount::Sandbox => None,
        ProcessorAccount::Adyen(adyen) => {
            let column = AdyenColumn {
                merchant_account: adyen.merchant_account.clone(),
                checkout_url: adyen.checkout_url.clone(),
                api_key: (&adyen.api_key).into(),
                hmac_key: (&adyen.hmac_key).into(),
                notification_username: adyen.notification_username.clone(),
                notification_password: (&adyen.notification_password).into(),
            };
            // Strings and nested structs only: serialising cannot fail.
            serde_json::to_string(&column).ok()
        }
    }
}

/// The account of a connection of `kind` from its `account` column.
pub fn account_of(
    kind: ProcessorKind,
    column: Option<&str>,
) -> Result<ProcessorAccount, StoreError> {
    match (kind, column) {
        (ProcessorKind::Sandbox, None) => Ok(ProcessorAccount::Sandbox),
        (ProcessorKind::Adyen, Some(json)) => {
            let column: AdyenColumn =
                serde_json::from_str(json).map_err(|e| corrupt("account", e))?;
            Ok(ProcessorAccount::Adyen(Box::new(AdyenAccount {
                merchant_account: column.merchant_account,
                checkout_url: column.checkout_url,
                api_key: column.api_key.try_into()?,
                hmac_key: column.hmac_key.try_into()?,
                notification_username: column.notification_username,
                notification_password: column.notification_password.try_into()?,
            })))
        }
        (kind, _) => Err(corrupt(
            "account",
            format!("a {kind} connection's account column does not fit its kind"),
        )),
    }
}
