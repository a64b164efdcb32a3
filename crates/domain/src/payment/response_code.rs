//! The processor response codes Holdfast speaks: one vocabulary for the sandbox that answers
//! with them, the payment service that records its own failures with them, and the API that
//! turns a decline into a stable word (`DeclineCode`, docs/testing.md).
//!
//! The values are ISO 8583 field 39 codes, as card processors send them. A real processor may
//! answer a code that is not listed here: it is recorded as sent and declines as
//! `generic_decline`.

use super::decline::DeclineCode;

crate::words! {
    /// A response code with a meaning of its own; `as_str` is its two digits on the wire.
    pub enum ResponseCode {
        /// `00`: approved in full.
        #[strum(serialize = "00")]
        Approved,
        /// `10`: approved for less than the amount asked.
        #[strum(serialize = "10")]
        PartialApproval,
        /// `05`: declined by the issuer without a reason.
        #[strum(serialize = "05")]
        DoNotHonor,
        /// `41`: the card was reported lost.
        #[strum(serialize = "41")]
        LostCard,
        /// `43`: the card was reported stolen.
        #[strum(serialize = "43")]
        StolenCard,
        /// `51`: the account lacks the funds or credit.
        #[strum(serialize = "51")]
        InsufficientFunds,
        /// `54`: the card is past its expiration date.
        #[strum(serialize = "54")]
        ExpiredCard,
        /// No answer in time (the issuer or switch is inoperative).
        #[strum(serialize = "91")]
        TimedOut,
        /// The processor could not take the request.
        #[strum(serialize = "96")]
        SystemError,
    }
}

impl ResponseCode {
    /// The processor's usual message for it.
    pub const fn message(self) -> &'static str {
        match self {
            Self::Approved => "Approved",
            Self::PartialApproval => "Partial approval",
            Self::DoNotHonor => "Do not honor",
            Self::LostCard => "Lost card, pick up",
            Self::StolenCard => "Stolen card, pick up",
            Self::InsufficientFunds => "Insufficient funds",
            Self::ExpiredCard => "Expired card",
            Self::TimedOut => "Issuer or switch inoperative",
            Self::SystemError => "System malfunction",
        }
    }

    /// Why a decline with this processor code was declined, in the API's vocabulary: the
    /// client may branch on it, whatever processor declined.
    pub fn decline(processor_code: &str) -> DeclineCode {
        match processor_code.parse() {
            Ok(Self::DoNotHonor) => DeclineCode::DoNotHonor,
            Ok(Self::InsufficientFunds) => DeclineCode::InsufficientFunds,
            Ok(Self::LostCard) => DeclineCode::LostCard,
            Ok(Self::StolenCard) => DeclineCode::StolenCard,
            Ok(Self::ExpiredCard) => DeclineCode::ExpiredCard,
            _ => DeclineCode::GenericDecline,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_and_unknown_codes_decline_generically() {
        for &code in ResponseCode::ALL {
            assert_eq!(code.as_str().parse(), Ok(code));
            assert_eq!(code.as_str().len(), 2);
        }
        let words: Vec<_> = ["05", "51", "41", "43", "54", "00", "96", "14", ""]
            .into_iter()
            .map(|code| ResponseCode::decline(code).as_str())
            .collect();
        assert_eq!(
            words,
            [
                "do_not_honor",
                "insufficient_funds",
                "lost_card",
                "stolen_card",
                "expired_card",
                "generic_decline",
                "generic_decline",
                "generic_decline",
                "generic_decline",
            ]
        );
    }
}
