//! A boarding form: created through the API for a merchant, filled in by the merchant on a
//! hosted page reached through an unguessable link, submitted, then decided by underwriting.

use std::net::IpAddr;

use time::OffsetDateTime;

use crate::api_key::KeyHash;
use crate::ids::{BoardingFormId, MerchantId, PlatformId};
use crate::mode::Mode;
use crate::ports::Sealed;

/// How long a form's link works unless the platform says otherwise.
pub const DEFAULT_LINK_LIFETIME: time::Duration = time::Duration::days(7);

crate::words! {
    /// Where a form stands.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum FormStatus {
        /// Being filled in; the link opens it.
        Open,
        /// Submitted; waiting for underwriting. The link shows it, read-only.
        Submitted,
        /// Underwriting approved the merchant.
        Approved,
        /// Underwriting declined the merchant.
        Declined,
        /// Underwriting asks for more: the form is open again for the fields it names.
        NeedsInformation,
    }
}

impl FormStatus {
    /// Whether the merchant may still change answers.
    pub fn is_editable(self) -> bool {
        matches!(self, Self::Open | Self::NeedsInformation)
    }
}

/// A secret kept sealed in the vault, with the only part ever shown again.
#[derive(Clone, PartialEq, Eq)]
pub struct SealedValue {
    /// The vault's sealing, bound to the form's id.
    pub sealed: Sealed,
    /// Its last four characters.
    pub last4: String,
}

impl std::fmt::Debug for SealedValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedValue(…{})", self.last4)
    }
}

/// Who submitted a form, when and from where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submission {
    /// The name the person typed as theirs.
    pub name: String,
    /// When.
    pub on: OffsetDateTime,
    /// The address the submission came from (the TCP peer, or the client a trusted proxy forwards for).
    pub address: Option<IpAddr>,
}

/// A boarding form as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoardingForm {
    /// `bf_…`.
    pub id: BoardingFormId,
    /// The platform that created it.
    pub platform_id: PlatformId,
    /// The mode of the key that created it (a test form is decided by the sandbox underwriter).
    pub mode: Mode,
    /// The merchant it boards.
    pub merchant_id: MerchantId,
    /// Where it stands.
    pub status: FormStatus,
    /// The SHA-256 of the secret its link carries; a new link replaces it.
    pub link_hash: KeyHash,
    /// When the link stops working.
    pub expires_on: OffsetDateTime,
    /// What has been entered so far, secrets aside.
    pub answers: super::answers::Answers,
    /// The tax id, sealed.
    pub tax_id: Option<SealedValue>,
    /// The payout account number (or IBAN), sealed.
    pub bank_account: Option<SealedValue>,
    /// The fields underwriting asked about again, when it needs information.
    pub requested_fields: Vec<String>,
    /// Underwriting's reason, in its words, when it declined or asked for more.
    pub reason: Option<String>,
    /// Who submitted it, once submitted.
    pub submission: Option<Submission>,
    /// When it was created.
    pub created_on: OffsetDateTime,
    /// When it last changed.
    pub updated_on: OffsetDateTime,
}

/// The `data` of `form.created` and `form.completed`: the form's id, its merchant, its status
/// and when it was submitted (`null` until then).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FormEvent {
    /// The form's id.
    pub id: BoardingFormId,
    /// The merchant it boards.
    pub merchant_id: MerchantId,
    /// The form's status when the event happened.
    pub status: FormStatus,
    /// When it was submitted, RFC 3339; `null` before.
    pub submitted_on: Option<String>,
}

impl BoardingForm {
    /// The data its events carry.
    pub fn event(&self) -> FormEvent {
        FormEvent {
            id: self.id.clone(),
            merchant_id: self.merchant_id.clone(),
            status: self.status,
            submitted_on: self
                .submission
                .as_ref()
                .map(|s| crate::payment::transaction::format_timestamp(s.on)),
        }
    }

    /// Whether its link opens it at `now`.
    pub fn link_works_at(&self, now: OffsetDateTime) -> bool {
        now < self.expires_on
    }
}
