//! Test mode's sandbox underwriter: an offer sized by what the merchant processed in the last
//! 90 days (`LoanTerms::underwritten`), so a platform can try the whole loan flow on its test
//! merchants without choosing terms.

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::Recorder;
use crate::ids::MerchantId;
use crate::loan::{LoanTerms, UNDERWRITING_WINDOW};
use crate::mode::Mode;

use super::{LoanService, NewLoan, OfferedLoan, ServiceError};

impl LoanService {
    /// Offers `merchant` what the sandbox underwriter makes of its processed volume, with
    /// `loan.created`. Test mode only; refused when the volume gives no advance.
    pub async fn underwrite(
        &self,
        who: &Principal,
        merchant: MerchantId,
        reply: Option<&Recorder<'_, OfferedLoan>>,
    ) -> Result<OfferedLoan, ServiceError> {
        if who.scope.mode != Mode::Test {
            return Err(ServiceError::Conflict {
                field: "merchantId",
                message: "the sandbox underwriter proposes offers in test mode only; offer a live loan with POST /v1/loans".into(),
            });
        }
        let found = self
            .merchants
            .get_merchant(&who.scope, &merchant)
            .await
            .map_err(ServiceError::Store)?
            .ok_or_else(|| Invalid::new("merchantId", "no such merchant"))?;
        let since = self.now() - UNDERWRITING_WINDOW;
        let volume = self
            .ledger
            .processed_since(&who.scope, &merchant, found.details.currency, since)
            .await
            .map_err(ServiceError::Store)?;
        let terms = LoanTerms::underwritten(volume).ok_or_else(|| ServiceError::Conflict {
            field: "merchantId",
            message: "the merchant processed too little in the last 90 days for an offer".into(),
        })?;
        let new = NewLoan {
            merchant,
            terms,
            offer_days: None,
        };
        self.offer(who, new, reply).await
    }
}
