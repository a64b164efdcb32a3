//! A platform's Adyen account as a processor connection holds it: where its Checkout API is,
//! which merchant account pays, and the secrets for calling Adyen and for checking what Adyen
//! sends back. The secrets are sealed by the vault before anything is stored, and only their
//! last four characters are ever shown.

use std::fmt;

use crate::Invalid;
use crate::mode::Mode;
use crate::ports::{CardVault, Sealed, VaultError};

/// Adyen's Checkout API for test accounts (v71, the version this connector speaks).
pub const TEST_CHECKOUT_URL: &str = "https://checkout-test.adyen.com/v71";

/// A live account's Checkout API: `https://{prefix}-checkout-live.adyenpayments.com/checkout/v71`,
/// the prefix being the merchant's own, shown in Adyen's Customer Area (Developers > API URLs).
const LIVE_HOST_SUFFIX: &str = "-checkout-live.adyenpayments.com";
const LIVE_PATH: &str = "/checkout/v71";

/// A secret as the client sent it: never shown by `Debug`, so it reaches no log.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps `text` as sent.
    pub fn new(text: String) -> Self {
        Self(text)
    }

    /// The secret itself, for sealing or for the call that needs it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

/// A secret at rest: sealed, with the last four characters a person may be shown to tell
/// which one it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedSecret {
    /// The vault's sealing, bound to the connection and the field.
    pub sealed: Sealed,
    /// The secret's last four characters.
    pub last4: String,
}

/// Where a connection may send its calls, besides Adyen's own hosts: a loopback address over
/// plain HTTP, for a test's stand-in Adyen only (`HOLDFAST_ADYEN_ALLOW_LOOPBACK`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UrlPolicy {
    /// Whether `http://127.0.0.1:…`, `http://[::1]:…` and `http://localhost:…` are taken.
    pub allow_loopback: bool,
}

/// An Adyen account as asked for: checked by `AdyenAccount::seal`.
#[derive(Debug, Clone)]
pub struct NewAdyenAccount {
    /// The merchant account payments are made on, as named in Adyen's Customer Area.
    pub merchant_account: String,
    /// The Checkout API's base URL; Adyen's test URL when `None` in test mode (live mode must
    /// name its own).
    pub checkout_url: Option<String>,
    /// The API key of Adyen's web service user, sent as `X-API-Key`.
    pub api_key: Secret,
    /// The HMAC key of the standard notification webhook, in hexadecimal as Adyen shows it.
    pub hmac_key: Secret,
    /// The Basic-auth user name Adyen sends with each notification.
    pub notification_username: String,
    /// The Basic-auth password Adyen sends with each notification.
    pub notification_password: Secret,
}

/// An Adyen account as a connection keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdyenAccount {
    /// The merchant account payments are made on.
    pub merchant_account: String,
    /// The Checkout API's base URL, without a trailing `/`.
    pub checkout_url: String,
    /// The API key, sealed.
    pub api_key: SealedSecret,
    /// The notification HMAC key, sealed.
    pub hmac_key: SealedSecret,
    /// The Basic-auth user name of notifications.
    pub notification_username: String,
    /// The Basic-auth password of notifications, sealed.
    pub notification_password: SealedSecret,
}

/// What checking a notification takes, opened for the check.
#[derive(Clone)]
pub struct NotificationSecrets {
    /// The notification HMAC key, as its bytes.
    pub hmac_key: Vec<u8>,
    /// The notification Basic-auth password.
    pub notification_password: Secret,
}

impl fmt::Debug for NotificationSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("NotificationSecrets(redacted)")
    }
}

/// The fields of an Adyen account, as the API names them.
pub mod fields {
    /// `adyen.merchantAccount`.
    pub const MERCHANT_ACCOUNT: &str = "adyen.merchantAccount";
    /// `adyen.checkoutUrl`.
    pub const CHECKOUT_URL: &str = "adyen.checkoutUrl";
    /// `adyen.apiKey`.
    pub const API_KEY: &str = "adyen.apiKey";
    /// `adyen.hmacKey`.
    pub const HMAC_KEY: &str = "adyen.hmacKey";
    /// `adyen.notificationUsername`.
    pub const NOTIFICATION_USERNAME: &str = "adyen.notificationUsername";
    /// `adyen.notificationPassword`.
    pub const NOTIFICATION_PASSWORD: &str = "adyen.notificationPassword";
}

impl NewAdyenAccount {
    /// Checks every field for a connection of `mode`, then seals the secrets for connection
    /// `connection_id`. Nothing of a refused value is repeated in the refusal.
    pub fn seal(
        self,
        mode: Mode,
        policy: UrlPolicy,
        connection_id: &str,
        vault: &dyn CardVault,
    ) -> Result<AdyenAccount, Invalid> {
        let merchant_account = merchant_account(&self.merchant_account)?;
        let checkout_url = checkout_url(self.checkout_url.as_deref(), mode, policy)?;
        visible_ascii(fields::API_KEY, self.api_key.expose(), 16, 1024)?;
        hex_key(self.hmac_key.expose())?;
        let username = visible_ascii(
            fields::NOTIFICATION_USERNAME,
            &self.notification_username,
            1,
            100,
        )?;
        if username.contains(':') {
            return Err(Invalid::new(
                fields::NOTIFICATION_USERNAME,
                "must not contain a colon (Basic authentication separates the password with one)",
            ));
        }
        visible_ascii(
            fields::NOTIFICATION_PASSWORD,
            self.notification_password.expose(),
            8,
            200,
        )?;
        let seal = |field: &str, secret: &Secret| SealedSecret {
            sealed: vault.seal(&context(connection_id, field), secret.expose()),
            last4: last4(secret.expose()),
        };
        Ok(AdyenAccount {
            merchant_account,
            checkout_url,
            api_key: seal(fields::API_KEY, &self.api_key),
            hmac_key: seal(fields::HMAC_KEY, &self.hmac_key),
            notification_username: username.to_owned(),
            notification_password: seal(fields::NOTIFICATION_PASSWORD, &self.notification_password),
        })
    }
}

impl AdyenAccount {
    /// The API key (sealed for connection `connection_id`), opened for one call: a call opens
    /// nothing else.
    pub fn api_key(
        &self,
        connection_id: &str,
        vault: &dyn CardVault,
    ) -> Result<Secret, VaultError> {
        let context = context(connection_id, fields::API_KEY);
        Ok(Secret(vault.open(&context, &self.api_key.sealed)?))
    }

    /// What checking a notification takes (sealed for connection `connection_id`), opened.
    pub fn notification_secrets(
        &self,
        connection_id: &str,
        vault: &dyn CardVault,
    ) -> Result<NotificationSecrets, VaultError> {
        let open = |field: &str, secret: &SealedSecret| {
            vault.open(&context(connection_id, field), &secret.sealed)
        };
        let hmac_key = open(fields::HMAC_KEY, &self.hmac_key)?;
        Ok(NotificationSecrets {
            hmac_key: unhex(&hmac_key).ok_or(VaultError::Corrupt)?,
            notification_password: Secret(open(
                fields::NOTIFICATION_PASSWORD,
                &self.notification_password,
            )?),
        })
    }
}

/// What a sealing is bound to: the connection and the field, so a sealed key cannot be moved
/// to another connection or stand in for another secret.
fn context(connection_id: &str, field: &str) -> String {
    format!("connection:{connection_id}:{field}")
}

fn last4(secret: &str) -> String {
    let skip = secret.chars().count().saturating_sub(4);
    secret.chars().skip(skip).collect()
}

fn merchant_account(raw: &str) -> Result<String, Invalid> {
    let name = raw.trim();
    let fits = (1..=100).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if !fits {
        return Err(Invalid::new(
            fields::MERCHANT_ACCOUNT,
            "must be Adyen's merchant account name: 1 to 100 letters, digits, '_', '-' or '.'",
        ));
    }
    Ok(name.to_owned())
}

/// Adyen's own test URL in test mode, the merchant's live URL in live mode; a loopback URL
/// only where the policy allows it (a test's stand-in). Never a trailing `/`.
fn checkout_url(raw: Option<&str>, mode: Mode, policy: UrlPolicy) -> Result<String, Invalid> {
    let refuse = |message: &str| Err(Invalid::new(fields::CHECKOUT_URL, message));
    let Some(raw) = raw else {
        return match mode {
            Mode::Test => Ok(TEST_CHECKOUT_URL.to_owned()),
            Mode::Live => refuse(
                "is required in live mode: https://{prefix}-checkout-live.adyenpayments.com/checkout/v71, with the prefix from Adyen's Customer Area",
            ),
        };
    };
    let url = raw.trim().trim_end_matches('/');
    if policy.allow_loopback && is_loopback(url) {
        return Ok(url.to_owned());
    }
    match mode {
        Mode::Test if url == TEST_CHECKOUT_URL => Ok(url.to_owned()),
        Mode::Test => {
            refuse("must be Adyen's test Checkout API, https://checkout-test.adyen.com/v71")
        }
        Mode::Live if is_live(url) => Ok(url.to_owned()),
        Mode::Live => refuse(
            "must be a live Checkout API, https://{prefix}-checkout-live.adyenpayments.com/checkout/v71",
        ),
    }
}

fn is_live(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("https://") else {
        return false;
    };
    let Some(prefix) = rest
        .strip_suffix(LIVE_PATH)
        .and_then(|host| host.strip_suffix(LIVE_HOST_SUFFIX))
    else {
        return false;
    };
    (1..=100).contains(&prefix.len())
        && prefix
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !prefix.starts_with('-')
}

/// `http://` to a loopback host with a port, and a path of visible ASCII.
fn is_loopback(url: &str) -> bool {
    let Some(rest) = url.strip_prefix("http://") else {
        return false;
    };
    let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = ["127.0.0.1:", "[::1]:", "localhost:"]
        .iter()
        .find_map(|host| authority.strip_prefix(host));
    host.is_some_and(|port| port.parse::<u16>().is_ok_and(|p| p > 0))
        && path.bytes().all(|b| b.is_ascii_graphic())
}

fn visible_ascii<'a>(
    field: &'static str,
    raw: &'a str,
    min: usize,
    max: usize,
) -> Result<&'a str, Invalid> {
    if !raw.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(Invalid::new(
            field,
            "must be printable ASCII without spaces, as Adyen's Customer Area shows it",
        ));
    }
    if !(min..=max).contains(&raw.len()) {
        return Err(Invalid::new(
            field,
            format!("must be {min} to {max} characters long"),
        ));
    }
    Ok(raw)
}

/// Adyen shows an HMAC key as 64 hexadecimal digits (32 bytes); any even count from 32 to 128
/// digits is taken.
fn hex_key(raw: &str) -> Result<(), Invalid> {
    let fits = (32..=128).contains(&raw.len())
        && raw.len().is_multiple_of(2)
        && raw.bytes().all(|b| b.is_ascii_hexdigit());
    if !fits {
        return Err(Invalid::new(
            fields::HMAC_KEY,
            "must be the HMAC key in hexadecimal, as Adyen's Customer Area shows it (64 digits)",
        ));
    }
    Ok(())
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    text.as_bytes()
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok())
        .collect()
}

#[cfg(test)]
mod tests;
