//! The events a loan's changes send (docs/loans.md, spec 6.1); loan deliveries are never resent
//! (spec 6.4).

use crate::webhook::EventType;

use super::{Loan, LoanState};

crate::words! {
    /// What happened to a loan, for the events whose `data` is the loan object.
    #[derive(strum::Display)]
    #[strum(serialize_all = "snake_case")]
    pub enum LoanEvent {
        /// Offered.
        Created,
        /// Accepted.
        Accepted,
        /// Its advance paid out.
        PaidOut,
        /// Nothing outstanding.
        Repaid,
        /// A minimum not met.
        PastDue,
        /// Back in good standing.
        Updated,
        /// Its offer ended unaccepted.
        Expired,
        /// Canceled before its payout.
        Canceled,
        /// Written off by the operator.
        ChargedOff,
    }
}

impl LoanEvent {
    /// The event a loan's move into `to` sends.
    pub fn of_move(from: LoanState, to: LoanState) -> Self {
        match to {
            LoanState::Offered => Self::Created,
            LoanState::Accepted => Self::Accepted,
            LoanState::PaidOut if from == LoanState::PastDue => Self::Updated,
            LoanState::PaidOut => Self::PaidOut,
            LoanState::PastDue => Self::PastDue,
            LoanState::Repaid => Self::Repaid,
            LoanState::Expired => Self::Expired,
            LoanState::Canceled => Self::Canceled,
            LoanState::ChargedOff => Self::ChargedOff,
        }
    }

    /// Its type in the catalogue.
    pub fn event_type(self) -> EventType {
        match self {
            Self::Created => EventType::LoanCreated,
            Self::Accepted => EventType::LoanAccepted,
            Self::PaidOut => EventType::LoanPaidOut,
            Self::Repaid => EventType::LoanRepaid,
            Self::PastDue => EventType::LoanPastDue,
            Self::Updated => EventType::LoanUpdated,
            Self::Expired => EventType::LoanExpired,
            Self::Canceled => EventType::LoanCanceled,
            Self::ChargedOff => EventType::LoanChargedOff,
        }
    }
}

/// A loan event's data: the loan as the change left it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoanNews {
    /// What happened.
    pub event: LoanEvent,
    /// The loan after it.
    pub loan: Loan,
}

impl serde::Serialize for LoanNews {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.loan.serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_move_of_the_table_sends_its_event_and_only_loan_events() {
        for &from in LoanState::ALL {
            for &to in LoanState::ALL {
                if from.to(to).is_none() {
                    continue;
                }
                let event = LoanEvent::of_move(from, to);
                let name = event.event_type().as_str();
                assert!(name.starts_with("loan."), "{from} -> {to}: {name}");
                assert!(!event.event_type().is_transaction(), "never resent");
                let expected = match (from, to) {
                    (LoanState::PastDue, LoanState::PaidOut) => "loan.updated".to_owned(),
                    (_, to) => format!("loan.{to}"),
                };
                assert_eq!(name, expected);
            }
        }
        assert_eq!(
            LoanEvent::of_move(LoanState::Offered, LoanState::Offered).event_type(),
            EventType::LoanCreated
        );
    }
}
