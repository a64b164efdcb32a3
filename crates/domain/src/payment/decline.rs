//! Why a card was declined, in one vocabulary whatever processor declined it: the
//! `authorization.declineCode` a client may branch on. Each processor's own codes map onto it
//! (`ResponseCode::decline` for the ISO 8583 codes of the sandbox, `adyen::refusal` for Adyen's
//! refusal reasons); the processor's code itself stays in `processorCode`.

crate::words! {
    /// A decline's reason, as the API spells it (the words follow the card industry's usual
    /// names, so a client that knows one payments API reads them without a table).
    pub enum DeclineCode {
        /// The issuer declined without saying why.
        #[strum(serialize = "do_not_honor")]
        DoNotHonor,
        /// The account lacks the funds or the credit.
        #[strum(serialize = "insufficient_funds")]
        InsufficientFunds,
        /// The card was reported lost.
        #[strum(serialize = "lost_card")]
        LostCard,
        /// The card was reported stolen.
        #[strum(serialize = "stolen_card")]
        StolenCard,
        /// The card is past its expiration date.
        #[strum(serialize = "expired_card")]
        ExpiredCard,
        /// The security code did not match.
        #[strum(serialize = "incorrect_cvc")]
        IncorrectCvc,
        /// The card number is not a valid account.
        #[strum(serialize = "incorrect_number")]
        IncorrectNumber,
        /// The amount is not one the card or the acquirer takes.
        #[strum(serialize = "invalid_amount")]
        InvalidAmount,
        /// The issuer or the processor's risk checks suspect fraud.
        #[strum(serialize = "fraudulent")]
        Fraudulent,
        /// The card is blocked or restricted (for example to some countries or merchants).
        #[strum(serialize = "restricted_card")]
        RestrictedCard,
        /// The card does not allow this kind of transaction.
        #[strum(serialize = "transaction_not_allowed")]
        TransactionNotAllowed,
        /// The processor does not support the card or this way of paying with it.
        #[strum(serialize = "card_not_supported")]
        CardNotSupported,
        /// The issuer asks the cardholder to authenticate (3-D Secure) or to enter a PIN.
        #[strum(serialize = "authentication_required")]
        AuthenticationRequired,
        /// The issuer asks that the cardholder call it (a referral).
        #[strum(serialize = "call_issuer")]
        CallIssuer,
        /// The PIN was wrong.
        #[strum(serialize = "incorrect_pin")]
        IncorrectPin,
        /// The PIN was wrong too many times.
        #[strum(serialize = "pin_try_exceeded")]
        PinTryExceeded,
        /// The address verification failed and the issuer or the processor declined for it.
        #[strum(serialize = "incorrect_address")]
        IncorrectAddress,
        /// The card's limit on amount or number of uses is reached.
        #[strum(serialize = "card_velocity_exceeded")]
        CardVelocityExceeded,
        /// The issuer could not be reached; the same card may succeed later.
        #[strum(serialize = "issuer_not_available")]
        IssuerNotAvailable,
        /// The processor or the acquirer failed while handling the payment.
        #[strum(serialize = "processing_error")]
        ProcessingError,
        /// The cardholder revoked the authorization (a stopped recurring payment).
        #[strum(serialize = "revocation_of_authorization")]
        RevocationOfAuthorization,
        /// Declined for a reason without a word of its own.
        #[strum(serialize = "generic_decline")]
        GenericDecline,
    }
}
