//! The ledger's reads: a merchant's balances and balance transactions, and the whole books
//! checked (docs/money.md).
//! Journals are posted by the payments and notices they record, never here.

use std::sync::Arc;

use crate::auth::Principal;
use crate::ids::MerchantId;
use crate::ledger::BalanceTransaction;
use crate::page::{Page, PageRequest};
use crate::ports::{
    Balance, BalanceTransactionFilter, Clock, LedgerCheck, LedgerStore, MerchantStore,
};

use super::ServiceError;

/// Balances and the books' check.
#[derive(Clone)]
pub struct LedgerService {
    ledger: Arc<dyn LedgerStore>,
    merchants: Arc<dyn MerchantStore>,
    clock: Arc<dyn Clock>,
}

impl std::fmt::Debug for LedgerService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LedgerService").finish_non_exhaustive()
    }
}

impl LedgerService {
    /// The service over the ledger, the merchants whose balances it reads, and the clock
    /// that says which charges are overdue for settlement.
    pub fn new(
        ledger: Arc<dyn LedgerStore>,
        merchants: Arc<dyn MerchantStore>,
        clock: Arc<dyn Clock>,
    ) -> Self {
        Self {
            ledger,
            merchants,
            clock,
        }
    }

    /// `merchant`'s balances in the caller's scope, one per currency it has money in; a
    /// merchant with none yet has zeros in its currency. `NotFound` for a merchant the caller
    /// cannot see (a deleted one that still holds money is still shown).
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn balances(
        &self,
        who: &Principal,
        merchant: &MerchantId,
    ) -> Result<Vec<Balance>, ServiceError> {
        let balances = self
            .ledger
            .balances(&who.scope, merchant)
            .await
            .map_err(ServiceError::Store)?;
        if !balances.is_empty() {
            return Ok(balances);
        }
        let found = self
            .merchants
            .get_merchant(&who.scope, merchant)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("merchant"))?;
        Ok(vec![Balance {
            currency: found.details.currency,
            available: 0,
            pending: 0,
            in_transit: 0,
        }])
    }

    /// The caller's balance transactions that `filter` lets through, newest first. A cursor
    /// that names no journal one could post stands before them all: after it, nothing.
    pub async fn balance_transactions(
        &self,
        who: &Principal,
        filter: &BalanceTransactionFilter,
        page: &PageRequest,
    ) -> Result<Page<BalanceTransaction>, ServiceError> {
        self.ledger
            .balance_transactions(&who.scope, filter, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// Checks the whole ledger (an operator's command).
    pub async fn check(&self) -> Result<LedgerCheck, ServiceError> {
        self.ledger
            .check(self.clock.now())
            .await
            .map_err(ServiceError::Store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ids::{KeyId, PlatformId, UserId};
    use crate::merchant::Currency;
    use crate::mode::{KeyType, Mode};
    use crate::ports::{MockLedgerStore, MockMerchantStore};
    use crate::scope::Scope;

    fn who() -> Principal {
        Principal {
            scope: Scope::new(PlatformId::from_suffix("P"), Mode::Test),
            key_type: KeyType::Private,
            key_id: Some(KeyId::from_suffix("K")),
            user_id: UserId::from_suffix("U"),
        }
    }

    /// Money in the ledger is shown as it is; a merchant without any shows zeros in its own
    /// currency; one the caller cannot see is not found.
    #[tokio::test]
    async fn balances_of_a_merchant_with_money_without_and_unknown() {
        let held = Balance {
            currency: Currency::USD,
            available: -400,
            pending: 941,
            in_transit: 0,
        };
        let cases = [
            (vec![held], true, Ok(vec![held])),
            (
                vec![],
                true,
                Ok(vec![Balance {
                    available: 0,
                    pending: 0,
                    ..held
                }]),
            ),
            (vec![], false, Err("merchant")),
        ];
        for (in_ledger, exists, expected) in cases {
            let mut ledger = MockLedgerStore::new();
            let rows = in_ledger.clone();
            ledger
                .expect_balances()
                .returning(move |_, _| Ok(rows.clone()));
            let mut merchants = MockMerchantStore::new();
            merchants.expect_get_merchant().returning(move |scope, id| {
                Ok(exists
                    .then(|| crate::services::fixtures::shop(id.clone(), scope.platform.clone())))
            });
            let service = LedgerService::new(
                Arc::new(ledger),
                Arc::new(merchants),
                Arc::new(crate::ports::MockClock::new()),
            );
            let got = service
                .balances(&who(), &MerchantId::from_suffix("M"))
                .await;
            match (got, expected) {
                (Ok(got), Ok(expected)) => assert_eq!(got, expected),
                (Err(ServiceError::NotFound(what)), Err(expected)) => assert_eq!(what, expected),
                (got, expected) => panic!("{got:?} vs {expected:?}"),
            }
        }
    }
}
