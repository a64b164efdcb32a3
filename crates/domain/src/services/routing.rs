//! Processor connections and plans: where a platform's payments may go, per mode, and what they
//! cost. A plan names only connections of its own platform and mode that take that mode's
//! payments (a live plan never routes to the sandbox), and at most `MAX_FALLBACKS` fallbacks.

use std::sync::Arc;

use crate::Invalid;
use crate::auth::Principal;
use crate::idempotency::{Recorder, reply_for};
use crate::ids::{ConnectionId, PlanId};
use crate::page::{Page, PageRequest};
use crate::payment::adyen::{NewAdyenAccount, UrlPolicy};
use crate::payment::brand::CardBrand;
use crate::payment::fee::FeeRule;
use crate::payment::routing::{
    MAX_FALLBACKS, Plan, ProcessorAccount, ProcessorConnection, ProcessorKind,
    fallbacks_within_bound,
};
use crate::ports::{CardVault, Clock, Ids, RoutingStore, StoreError};

use super::ServiceError;

/// A plan as asked for; its name already validated (`routing::resource_name`).
#[derive(Debug, Clone)]
pub struct NewPlan {
    /// The plan's display name.
    pub name: String,
    /// What the plan charges the merchant per transaction.
    pub fee: FeeRule,
    /// Where a card goes when its brand has no route of its own.
    pub default_connection: ConnectionId,
    /// Brand-specific connections; a brand not listed goes to the default.
    pub brand_routes: Vec<(CardBrand, ConnectionId)>,
    /// Tried in order when the chosen connection is unavailable; at most `MAX_FALLBACKS`.
    pub fallbacks: Vec<ConnectionId>,
    /// Whether merchants with no plan assigned use this one; one per platform and mode.
    pub is_default: bool,
    /// How long its charges stay pending before they settle.
    pub settlement_delay: crate::ledger::SettlementDelay,
}

/// The field a plan's connection is named in, as the API spells it.
pub fn brand_route_field(brand: CardBrand) -> &'static str {
    match brand {
        CardBrand::Visa => "brandRoutes.visa",
        CardBrand::Mastercard => "brandRoutes.mastercard",
        CardBrand::Amex => "brandRoutes.amex",
        CardBrand::Discover => "brandRoutes.discover",
        CardBrand::Jcb => "brandRoutes.jcb",
        CardBrand::Diners => "brandRoutes.diners",
        CardBrand::UnionPay => "brandRoutes.unionpay",
        CardBrand::Unknown => "brandRoutes.unknown",
    }
}

/// `fallbacks.N` for each place a fallback may take.
pub const FALLBACK_FIELDS: [&str; MAX_FALLBACKS] =
    ["fallbacks.0", "fallbacks.1", "fallbacks.2", "fallbacks.3"];

/// What a connection id that names nothing usable is told, in every field.
pub const NO_SUCH_CONNECTION: &str = "no such processor connection in this mode";

/// The account a new connection reaches, as asked for.
#[derive(Debug, Clone)]
pub enum NewAccount {
    /// The built-in sandbox.
    Sandbox,
    /// An Adyen merchant account, checked and sealed as the connection is made.
    Adyen(Box<NewAdyenAccount>),
}

impl NewAccount {
    fn kind(&self) -> ProcessorKind {
        match self {
            Self::Sandbox => ProcessorKind::Sandbox,
            Self::Adyen(_) => ProcessorKind::Adyen,
        }
    }
}

/// Creates and reads processor connections and plans, always in the caller's platform and mode.
#[derive(Clone)]
pub struct RoutingService {
    store: Arc<dyn RoutingStore>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    vault: Arc<dyn CardVault>,
    urls: UrlPolicy,
}

impl RoutingService {
    /// A service over `store`, with time from `clock`, ids from `ids`, the `vault` that seals a
    /// connection's secrets, and the processor URLs `urls` allows besides the processors' own.
    pub fn new(
        store: Arc<dyn RoutingStore>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
        vault: Arc<dyn CardVault>,
        urls: UrlPolicy,
    ) -> Self {
        Self {
            store,
            clock,
            ids,
            vault,
            urls,
        }
    }

    /// A connection in the caller's mode, of a kind that takes that mode's payments, its
    /// secrets sealed. Under an idempotency key (`reply`), the answer is stored with it.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create_connection(
        &self,
        who: &Principal,
        name: String,
        account: NewAccount,
        reply: Option<&Recorder<'_, ProcessorConnection>>,
    ) -> Result<ProcessorConnection, ServiceError> {
        if !account.kind().serves(who.scope.mode) {
            return Err(Invalid::new(
                "kind",
                "a sandbox connection takes test payments only: live mode needs a real processor",
            )
            .into());
        }
        let id = ConnectionId::from_suffix(&self.ids.next_id());
        let account = match account {
            NewAccount::Sandbox => ProcessorAccount::Sandbox,
            NewAccount::Adyen(new) => ProcessorAccount::Adyen(Box::new(new.seal(
                who.scope.mode,
                self.urls,
                id.as_str(),
                self.vault.as_ref(),
            )?)),
        };
        let connection = ProcessorConnection {
            id,
            platform_id: who.scope.platform.clone(),
            mode: who.scope.mode,
            name,
            account,
            created_on: self.clock.now(),
        };
        self.store
            .insert_connection(&connection, reply_for(reply, &connection))
            .await
            .map_err(ServiceError::Store)?;
        Ok(connection)
    }

    /// One connection of the caller's platform and mode; any other is `NotFound`, exactly like one
    /// that never existed.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn connection(
        &self,
        who: &Principal,
        id: &ConnectionId,
    ) -> Result<ProcessorConnection, ServiceError> {
        self.store
            .get_connection(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("processor connection"))
    }

    /// The caller's connections in its mode, newest first.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn connections(
        &self,
        who: &Principal,
        page: &PageRequest,
    ) -> Result<Page<ProcessorConnection>, ServiceError> {
        self.store
            .list_connections(&who.scope, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// Every connection the plan names is checked (`usable`) before anything is written. Under
    /// an idempotency key (`reply`), the answer is stored with the plan.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn create_plan(
        &self,
        who: &Principal,
        new: NewPlan,
        reply: Option<&Recorder<'_, Plan>>,
    ) -> Result<Plan, ServiceError> {
        fallbacks_within_bound(new.fallbacks.len())?;
        self.usable(who, "defaultConnectionId", &new.default_connection)
            .await?;
        for (brand, connection) in &new.brand_routes {
            self.usable(who, brand_route_field(*brand), connection)
                .await?;
        }
        for (field, connection) in FALLBACK_FIELDS.iter().zip(&new.fallbacks) {
            self.usable(who, field, connection).await?;
        }
        let plan = Plan {
            id: PlanId::from_suffix(&self.ids.next_id()),
            platform_id: who.scope.platform.clone(),
            mode: who.scope.mode,
            name: new.name,
            fee: new.fee,
            default_connection: new.default_connection,
            brand_routes: new.brand_routes,
            fallbacks: new.fallbacks,
            is_default: new.is_default,
            created_on: self.clock.now(),
            settlement_delay: new.settlement_delay,
        };
        match self.store.insert_plan(&plan, reply_for(reply, &plan)).await {
            Ok(()) => Ok(plan),
            Err(StoreError::Duplicate("plans.default")) => Err(ServiceError::Conflict {
                field: "default",
                message: "this platform already has a default plan in this mode".into(),
            }),
            Err(other) => Err(ServiceError::Store(other)),
        }
    }

    /// One plan of the caller's platform and mode; any other is `NotFound`, exactly like one that
    /// never existed.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str(), id = %id))]
    pub async fn plan(&self, who: &Principal, id: &PlanId) -> Result<Plan, ServiceError> {
        self.store
            .get_plan(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or(ServiceError::NotFound("plan"))
    }

    /// The caller's plans in its mode, newest first.
    #[tracing::instrument(level = "debug", skip_all, fields(platform = %who.scope.platform, mode = who.scope.mode.as_str()))]
    pub async fn plans(
        &self,
        who: &Principal,
        page: &PageRequest,
    ) -> Result<Page<Plan>, ServiceError> {
        self.store
            .list_plans(&who.scope, page)
            .await
            .map_err(ServiceError::Store)
    }

    /// A connection of the caller's platform and mode that takes that mode's payments; else a
    /// refusal naming `field`.
    async fn usable(
        &self,
        who: &Principal,
        field: &'static str,
        id: &ConnectionId,
    ) -> Result<(), ServiceError> {
        let connection = self
            .store
            .get_connection(&who.scope, id)
            .await
            .map_err(ServiceError::Store)?
            .ok_or_else(|| Invalid::new(field, NO_SUCH_CONNECTION))?;
        if !connection.kind().serves(who.scope.mode) {
            return Err(Invalid::new(
                field,
                "is a sandbox connection, which takes test payments only",
            )
            .into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_names_are_the_apis() {
        for &brand in CardBrand::ALL {
            assert_eq!(
                brand_route_field(brand),
                format!("brandRoutes.{}", brand.as_str())
            );
        }
        for (i, field) in FALLBACK_FIELDS.iter().enumerate() {
            assert_eq!(*field, format!("fallbacks.{i}"));
        }
    }
}
