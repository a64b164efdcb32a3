//! Merchant CRUD, always inside the caller's platform and mode.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{EventId, MerchantId};
use crate::merchant::{Merchant, MerchantDetails, MerchantPatch};
use crate::page::{Page, PageRequest};
use crate::ports::{Clock, Ids, MerchantStore, RoutingStore};

use super::ServiceError;

/// Why a `planId` is refused: malformed, of another platform or mode, or unknown alike.
pub const NO_SUCH_PLAN: &str = "no such plan in this mode";

/// Merchant CRUD inside the caller's platform and mode, each change written with its merchant
/// event.
#[derive(Clone)]
pub struct MerchantService {
    merchants: Arc<dyn MerchantStore>,
    /// Where plans are found: a merchant may only be put on a plan of its platform and mode.
    plans: Arc<dyn RoutingStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl MerchantService {
    /// A service over the merchant store, checking plans in `plans`, with time from `clock` and ids
    /// from `ids`.
    pub fn new(
        merchants: Arc<dyn MerchantStore>,
        plans: Arc<dyn RoutingStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            merchants,
            plans,
            clock,
            ids,
        }
    }

    fn event_id(&self) -> EventId {
        EventId::from_suffix(&self.ids.next_id())
    }

    /// Under an idempotency key (`reply`), the answer is stored with the merchant.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create(
        &self,
        who: &Principal,
        details: MerchantDetails,
        reply: Option<&Recorder<'_, Merchant>>,
    ) -> Result<Merchant, ServiceError> {
        let now = self.clock.now();
        let id = MerchantId::from_suffix(&self.ids.next_id());
        let merchant = Merchant::new(id, &who.scope, details, now);
        self.merchants
            .insert_merchant_with_event(&merchant, &self.event_id(), reply_for(reply, &merchant))
            .await
            .map_err(ServiceError::Store)?;
        Ok(merchant)
    }

    /// A merchant of another platform or mode is `NotFound`, exactly like one that never existed.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn get(&self, who: &Principal, id: &MerchantId) -> Result<Merchant, ServiceError> {
        self.merchants
            .get_merchant(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("merchant"))
    }

    /// The caller's merchants in its mode, deleted ones left out, newest first.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn list(
        &self,
        who: &Principal,
        page: &PageRequest,
    ) -> Result<Page<Merchant>, ServiceError> {
        self.merchants
            .list_merchants(&who.scope, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// Changes the fields `patch` carries, with a `merchant.updated` event. A `planId` must name a
    /// plan of the caller's platform and mode. `NotFound` when absent in this scope.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn update(
        &self,
        who: &Principal,
        id: &MerchantId,
        patch: MerchantPatch,
    ) -> Result<Merchant, ServiceError> {
        if let Some(Some(plan)) = &patch.plan_id {
            self.plans
                .get_plan(&who.scope, plan)
                .await
                .map_err(ServiceError::Store)?
                .ok_or_else(|| Invalid::new("planId", NO_SUCH_PLAN))?;
        }
        self.merchants
            .update_merchant_with_event(&who.scope, id, &patch, self.clock.now(), &self.event_id())
            .await
            .map_err(|e| ServiceError::from_store("merchant", e))
    }

    /// Marks the merchant deleted (its past payments keep pointing at it), with a
    /// `merchant.deleted` event. `NotFound` when absent in this scope or already deleted.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn delete(&self, who: &Principal, id: &MerchantId) -> Result<(), ServiceError> {
        self.merchants
            .delete_merchant_with_event(&who.scope, id, self.clock.now(), &self.event_id())
            .await
            .map_err(|e| ServiceError::from_store("merchant", e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::idempotency::{Answer, IdempotencyKey};
    use crate::ids::{KeyId, PlatformId, UserId};
    use crate::merchant::{Currency, MerchantName, MerchantPatch};
    use crate::mode::{KeyType, Mode};
    use crate::ports::{MockClock, MockIds, MockMerchantStore, MockRoutingStore};
    use crate::services::fixtures::clock_at_noon;

    fn principal(mode: Mode) -> Principal {
        Principal {
            scope: crate::scope::Scope::new(PlatformId::from_suffix("1"), mode),
            key_type: KeyType::Private,
            key_id: Some(KeyId::from_suffix("1")),
            user_id: UserId::from_suffix("1"),
        }
    }

    /// Under an idempotency key, the answer rendered from the merchant goes to the store with it.
    #[tokio::test]
    async fn create_takes_platform_and_mode_from_the_principal() {
        let clock = clock_at_noon();
        let mut ids = MockIds::new();
        ids.expect_next_id().return_const("01".to_owned());
        let mut store = MockMerchantStore::new();
        store
            .expect_insert_merchant_with_event()
            .withf(|m, event, reply| {
                m.mode == Mode::Live
                    && m.platform_id.as_str() == "pfm_1"
                    && event.as_str() == "evt_01"
                    && reply.as_ref().is_some_and(|r| {
                        r.key.as_str() == "order-1" && r.answer.body == "made mid_01"
                    })
            })
            .times(1)
            .returning(|_, _, _| Ok(()));
        let service = MerchantService::new(
            Arc::new(store),
            Arc::new(MockRoutingStore::new()),
            Arc::new(clock),
            Arc::new(ids),
        );
        let details = MerchantDetails {
            name: MerchantName::parse("Shop").unwrap(),
            currency: Currency::USD,
            email: None,
            metadata: crate::metadata::Metadata::default(),
        };
        let key = IdempotencyKey::parse("order-1").unwrap();
        let render = |m: &Merchant| Answer {
            status: 201,
            body: format!("made {}", m.id),
        };
        let recorder = Recorder {
            key: &key,
            render: &render,
            claim_at_first_write: None,
        };
        let merchant = service
            .create(&principal(Mode::Live), details, Some(&recorder))
            .await
            .unwrap();
        assert_eq!(merchant.id.as_str(), "mid_01");
    }

    #[tokio::test]
    async fn update_and_delete_are_scoped_and_map_not_found() {
        let clock = clock_at_noon();
        let mut store = MockMerchantStore::new();
        store
            .expect_update_merchant_with_event()
            .withf(|scope, _, patch, _, _| {
                scope.platform.as_str() == "pfm_1"
                    && scope.mode == Mode::Live
                    && patch.name.is_some()
            })
            .returning(|_, _, _, _, _| Err(crate::ports::StoreError::NotFound));
        store
            .expect_delete_merchant_with_event()
            .withf(|scope, _, _, _| scope.platform.as_str() == "pfm_1" && scope.mode == Mode::Live)
            .returning(|_, _, _, _| Err(crate::ports::StoreError::NotFound));
        let mut ids = MockIds::new();
        ids.expect_next_id().return_const("02".to_owned());
        let service = MerchantService::new(
            Arc::new(store),
            Arc::new(MockRoutingStore::new()),
            Arc::new(clock),
            Arc::new(ids),
        );
        let who = principal(Mode::Live);
        let id = MerchantId::from_suffix("9");
        let patch = MerchantPatch {
            name: Some(MerchantName::parse("New").unwrap()),
            ..MerchantPatch::default()
        };
        let err = service.update(&who, &id, patch).await.unwrap_err();
        assert!(matches!(err, ServiceError::NotFound("merchant")), "{err:?}");
        let err = service.delete(&who, &id).await.unwrap_err();
        assert!(matches!(err, ServiceError::NotFound("merchant")), "{err:?}");
    }

    /// A plan of another platform or mode is refused as unknown before anything is written;
    /// one of the caller's own is put on the merchant; `null` needs no plan at all.
    #[tokio::test]
    async fn a_merchant_is_put_only_on_a_plan_of_its_platform_and_mode() {
        use crate::ids::{ConnectionId, PlanId};
        use crate::payment::fee::FeeRule;
        use crate::payment::routing::Plan;
        let mut plans = MockRoutingStore::new();
        plans
            .expect_get_plan()
            .withf(|scope, _| scope.platform.as_str() == "pfm_1" && scope.mode == Mode::Live)
            .returning(|_, id| {
                Ok((id.as_str() == "plan_mine").then(|| Plan {
                    id: id.clone(),
                    platform_id: PlatformId::from_suffix("1"),
                    mode: Mode::Live,
                    name: "Mine".into(),
                    fee: FeeRule::new(0, 0).unwrap(),
                    default_connection: ConnectionId::from_suffix("1"),
                    brand_routes: Vec::new(),
                    fallbacks: Vec::new(),
                    is_default: false,
                    created_on: crate::services::fixtures::NOON,
                    settlement_delay: crate::ledger::SettlementDelay::DEFAULT,
                }))
            });
        let mut store = MockMerchantStore::new();
        store
            .expect_update_merchant_with_event()
            .withf(|_, _, patch, _, _| {
                matches!(&patch.plan_id, Some(Some(p)) if p.as_str() == "plan_mine")
                    || matches!(patch.plan_id, Some(None))
            })
            .times(2)
            .returning(|_, _, _, _, _| Err(crate::ports::StoreError::NotFound));
        let mut ids = MockIds::new();
        ids.expect_next_id().return_const("03".to_owned());
        let service = MerchantService::new(
            Arc::new(store),
            Arc::new(plans),
            Arc::new(clock_at_noon()),
            Arc::new(ids),
        );
        let who = principal(Mode::Live);
        let id = MerchantId::from_suffix("9");
        let on = |plan: Option<&str>| MerchantPatch {
            plan_id: Some(plan.map(PlanId::from_suffix)),
            ..MerchantPatch::default()
        };
        let refused = service.update(&who, &id, on(Some("theirs"))).await;
        assert!(
            matches!(&refused, Err(ServiceError::Invalid(i)) if i.field == "planId"),
            "{refused:?}"
        );
        // Reaching the store (a NotFound merchant here) means the plan was accepted.
        for plan in [Some("mine"), None] {
            let reached = service.update(&who, &id, on(plan)).await;
            assert!(
                matches!(reached, Err(ServiceError::NotFound("merchant"))),
                "{reached:?}"
            );
        }
    }

    #[tokio::test]
    async fn lookups_are_scoped_by_the_principal_mode() {
        let mut store = MockMerchantStore::new();
        store
            .expect_get_merchant()
            .withf(|scope, _| scope.mode == Mode::Test)
            .returning(|_, _| Ok(None));
        let service = MerchantService::new(
            Arc::new(store),
            Arc::new(MockRoutingStore::new()),
            Arc::new(MockClock::new()),
            Arc::new(MockIds::new()),
        );
        let err = service
            .get(&principal(Mode::Test), &MerchantId::from_suffix("9"))
            .await
            .unwrap_err();
        assert!(matches!(err, ServiceError::NotFound("merchant")));
    }
}
