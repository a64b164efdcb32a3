//! The processor response codes Holdfast speaks: one vocabulary for the sandbox that answers
//! with them, the payment service that records its own failures with them, and the API that
//! turns a decline into a stable word (docs/testing.md).
//!
//! The values are ISO 8583 field 39 codes, as card processors send them. A real processor may
//! answer a code that is not listed here: it is recorded as sent and declines as
//! `generic_decline`.

/// A response code with a meaning of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResponseCode {
    /// `00`: approved in full.
    Approved,
    /// `10`: approved for less than the amount asked.
    PartialApproval,
    /// `05`: declined by the issuer without a reason.
    DoNotHonor,
    /// `41`: the card was reported lost.
    LostCard,
    /// `43`: the card was reported stolen.
    StolenCard,
    /// `51`: the account lacks the funds or credit.
    InsufficientFunds,
    /// `54`: the card is past its expiration date.
    ExpiredCard,
    /// No answer in time (the issuer or switch is inoperative).
    TimedOut,
    /// The processor could not take the request.
    SystemError,
}

impl ResponseCode {
    /// Every code listed here, for looking one up by its digits.
    pub const ALL: [ResponseCode; 9] = [
        Self::Approved,
        Self::PartialApproval,
        Self::DoNotHonor,
        Self::LostCard,
        Self::StolenCard,
        Self::InsufficientFunds,
        Self::ExpiredCard,
        Self::TimedOut,
        Self::SystemError,
    ];

    /// The two digits on the wire.
    pub const fn code(self) -> &'static str {
        match self {
            Self::Approved => "00",
            Self::PartialApproval => "10",
            Self::DoNotHonor => "05",
            Self::LostCard => "41",
            Self::StolenCard => "43",
            Self::InsufficientFunds => "51",
            Self::ExpiredCard => "54",
            Self::TimedOut => "91",
            Self::SystemError => "96",
        }
    }

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

    /// The code with these two digits on the wire; `None` for a code not listed here.
    pub fn from_code(code: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|c| c.code() == code)
    }

    /// The stable word the API gives a decline with this processor code: the client may branch
    /// on it, whatever processor declined.
    pub fn decline_word(processor_code: &str) -> &'static str {
        match Self::from_code(processor_code) {
            Some(Self::DoNotHonor) => "do_not_honor",
            Some(Self::InsufficientFunds) => "insufficient_funds",
            Some(Self::LostCard) => "lost_card",
            Some(Self::StolenCard) => "stolen_card",
            Some(Self::ExpiredCard) => "expired_card",
            _ => "generic_decline",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_reads_back_and_unknown_codes_decline_generically() {
        for code in ResponseCode::ALL {
            assert_eq!(ResponseCode::from_code(code.code()), Some(code));
        }
        let words: Vec<_> = ["05", "51", "41", "43", "54", "00", "96", "14", ""]
            .into_iter()
            .map(ResponseCode::decline_word)
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
