//! The tables themselves, row for row as Adyen documents them (docs/processors/adyen.md repeats
//! them, and a test keeps the two equal).

use super::ResultKind;
use crate::payment::decline::DeclineCode;
use crate::payment::transaction::{AvsCode, CvvCode};

/// `resultCode` → how it is read (the whole enum of Checkout API v71).
pub const RESULT_CODES: &[(&str, ResultKind)] = &[
    ("Authorised", ResultKind::Authorised),
    ("PartiallyAuthorised", ResultKind::PartiallyAuthorised),
    ("Refused", ResultKind::Refused),
    ("Cancelled", ResultKind::Refused),
    ("Error", ResultKind::Error),
    ("RedirectShopper", ResultKind::NeedsShopper),
    ("IdentifyShopper", ResultKind::NeedsShopper),
    ("ChallengeShopper", ResultKind::NeedsShopper),
    ("PresentToShopper", ResultKind::NeedsShopper),
    ("AuthenticationFinished", ResultKind::NeedsShopper),
    ("AuthenticationNotRequired", ResultKind::NeedsShopper),
    ("Pending", ResultKind::Unsettled),
    ("Received", ResultKind::Unsettled),
    ("Success", ResultKind::Unsettled),
];

/// `refusalReasonCode` → `declineCode` (Adyen's refusal reasons; any other is
/// `generic_decline`).
pub const REFUSAL_REASONS: &[(&str, &str, DeclineCode)] = &[
    ("2", "Refused", DeclineCode::GenericDecline),
    ("3", "Referral", DeclineCode::CallIssuer),
    ("4", "Acquirer Error", DeclineCode::ProcessingError),
    ("5", "Blocked Card", DeclineCode::RestrictedCard),
    ("6", "Expired Card", DeclineCode::ExpiredCard),
    ("7", "Invalid Amount", DeclineCode::InvalidAmount),
    ("8", "Invalid Card Number", DeclineCode::IncorrectNumber),
    ("9", "Issuer Unavailable", DeclineCode::IssuerNotAvailable),
    ("10", "Not supported", DeclineCode::CardNotSupported),
    (
        "11",
        "3D Not Authenticated",
        DeclineCode::AuthenticationRequired,
    ),
    ("12", "Not enough balance", DeclineCode::InsufficientFunds),
    ("14", "Acquirer Fraud", DeclineCode::Fraudulent),
    ("15", "Cancelled", DeclineCode::GenericDecline),
    ("16", "Shopper Cancelled", DeclineCode::GenericDecline),
    ("17", "Invalid Pin", DeclineCode::IncorrectPin),
    ("18", "Pin tries exceeded", DeclineCode::PinTryExceeded),
    (
        "19",
        "Pin validation not possible",
        DeclineCode::ProcessingError,
    ),
    ("20", "FRAUD", DeclineCode::Fraudulent),
    ("21", "Not Submitted", DeclineCode::ProcessingError),
    ("22", "FRAUD-CANCELLED", DeclineCode::Fraudulent),
    (
        "23",
        "Transaction Not Permitted",
        DeclineCode::TransactionNotAllowed,
    ),
    ("24", "CVC Declined", DeclineCode::IncorrectCvc),
    ("25", "Restricted Card", DeclineCode::RestrictedCard),
    (
        "26",
        "Revocation Of Auth",
        DeclineCode::RevocationOfAuthorization,
    ),
    ("27", "Declined Non Generic", DeclineCode::DoNotHonor),
    (
        "28",
        "Withdrawal amount exceeded",
        DeclineCode::CardVelocityExceeded,
    ),
    (
        "29",
        "Withdrawal count exceeded",
        DeclineCode::CardVelocityExceeded,
    ),
    ("31", "Issuer Suspected Fraud", DeclineCode::Fraudulent),
    ("32", "AVS Declined", DeclineCode::IncorrectAddress),
    (
        "33",
        "Card requires online pin",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "34",
        "No checking account available on Card",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "35",
        "No savings account available on Card",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "36",
        "Mobile pin required",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "37",
        "Contactless fallback",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "38",
        "Authentication required",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "39",
        "RReq not received from DS",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "40",
        "Current AID is in Penalty Box",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "41",
        "CVM Required Restart Payment",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "42",
        "3DS Authentication Error",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "43",
        "Online PIN required",
        DeclineCode::AuthenticationRequired,
    ),
    (
        "44",
        "Try another interface",
        DeclineCode::TransactionNotAllowed,
    ),
    (
        "45",
        "Transaction Blocked by Adyen to prevent excessive retry fees",
        DeclineCode::CardVelocityExceeded,
    ),
    (
        "46",
        "Chip downgrade mode",
        DeclineCode::TransactionNotAllowed,
    ),
];

/// The number that starts `avsResult` → `avs` (Adyen's AVS results; any other is `U`).
pub const AVS_RESULTS: &[(u8, &str, AvsCode)] = &[
    (0, "Unknown", AvsCode::Unavailable),
    (
        1,
        "Address matches, postal code doesn't",
        AvsCode::AddressOnly,
    ),
    (2, "Neither postal code nor address match", AvsCode::NoMatch),
    (3, "AVS unavailable", AvsCode::Retry),
    (
        4,
        "AVS not supported for this card type",
        AvsCode::Unavailable,
    ),
    (5, "No AVS data provided", AvsCode::Unavailable),
    (
        6,
        "Postal code matches, address doesn't match",
        AvsCode::PostalOnly,
    ),
    (7, "Both postal code and address match", AvsCode::FullMatch),
    (
        8,
        "Address not checked, postal code unknown",
        AvsCode::Unavailable,
    ),
    (
        9,
        "Address matches, postal code unknown",
        AvsCode::AddressOnly,
    ),
    (
        10,
        "Address doesn't match, postal code unknown",
        AvsCode::NoMatch,
    ),
    (
        11,
        "Postal code not checked, address unknown",
        AvsCode::Unavailable,
    ),
    (
        12,
        "Address matches, postal code not checked",
        AvsCode::AddressOnly,
    ),
    (
        13,
        "Address doesn't match, postal code not checked",
        AvsCode::NoMatch,
    ),
    (
        14,
        "Postal code matches, address unknown",
        AvsCode::PostalOnly,
    ),
    (
        15,
        "Postal code matches, address not checked",
        AvsCode::PostalOnly,
    ),
    (
        16,
        "Postal code doesn't match, address unknown",
        AvsCode::NoMatch,
    ),
    (
        17,
        "Postal code doesn't match, address not checked",
        AvsCode::NoMatch,
    ),
    (
        18,
        "Neither postal code nor address were checked",
        AvsCode::Unavailable,
    ),
    (19, "Name and postal code matches", AvsCode::PostalOnly),
    (
        20,
        "Name, address and postal code matches",
        AvsCode::FullMatch,
    ),
    (21, "Name and address matches", AvsCode::AddressOnly),
    (22, "Name matches", AvsCode::Unavailable),
    (
        23,
        "Postal code matches, name doesn't match",
        AvsCode::PostalOnly,
    ),
    (
        24,
        "Both postal code and address matches, name doesn't match",
        AvsCode::FullMatch,
    ),
    (
        25,
        "Address matches, name doesn't match",
        AvsCode::AddressOnly,
    ),
    (
        26,
        "Neither postal code, address nor name matches",
        AvsCode::NoMatch,
    ),
];

/// The number that starts `cvcResult` → `cvv` (Adyen's CVC results; any other is `P`).
pub const CVC_RESULTS: &[(u8, &str, CvvCode)] = &[
    (0, "Unknown", CvvCode::NotProcessed),
    (1, "Matches", CvvCode::Match),
    (2, "Doesn't match", CvvCode::NoMatch),
    (3, "Not checked", CvvCode::NotProcessed),
    (4, "No CVC/CVV provided, but was required", CvvCode::NoMatch),
    (5, "Issuer not certified for CVC/CVV", CvvCode::Unsupported),
    (6, "No CVC/CVV provided", CvvCode::NotProcessed),
];
