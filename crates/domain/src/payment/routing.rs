//! Plans and processor connections: which processor handles a payment, and what it costs.
//!
//! The rule: a plan sends a card to the connection named for its brand, else to its default
//! connection. When that processor is unavailable (a retryable error, never a decline and never
//! a timeout, whose outcome is unknown), the plan's fallback connections are tried in order.

use time::OffsetDateTime;

use crate::Invalid;
use crate::ids::{ConnectionId, PlanId, PlatformId};
use crate::mode::Mode;
use crate::text::bounded_text;

use super::adyen::AdyenAccount;
use super::brand::CardBrand;
use super::fee::FeeRule;

crate::words! {
    /// The processor software behind a connection.
    #[derive(strum::Display)]
    #[strum(serialize_all = "lowercase")]
    pub enum ProcessorKind {
        /// Holdfast's built-in processor: deterministic outcomes by test card (docs/testing.md).
        Sandbox,
        /// Adyen's Checkout API (docs/processors/adyen.md).
        Adyen,
    }
}

impl ProcessorKind {
    /// Whether payments of `mode` may go to this kind of processor. The sandbox approves by
    /// test card and moves no money: a live payment routed to it would be "approved" and never
    /// paid, so it serves test mode only.
    pub fn serves(self, mode: Mode) -> bool {
        match self {
            Self::Sandbox => mode == Mode::Test,
            Self::Adyen => true,
        }
    }
}

/// The account at the processor a connection reaches, with what calling it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessorAccount {
    /// The built-in sandbox: nothing to configure.
    Sandbox,
    /// An Adyen merchant account, its secrets sealed.
    Adyen(Box<AdyenAccount>),
}

impl ProcessorAccount {
    /// The processor software behind the account.
    pub fn kind(&self) -> ProcessorKind {
        match self {
            Self::Sandbox => ProcessorKind::Sandbox,
            Self::Adyen(_) => ProcessorKind::Adyen,
        }
    }
}

/// A platform's account at a processor, in one mode: where a plan sends payments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessorConnection {
    /// The connection's id (`midCon_` prefix), shown as a transaction's `processor.id`.
    pub id: ConnectionId,
    /// The platform that owns the connection.
    pub platform_id: PlatformId,
    /// The only mode whose payments it takes.
    pub mode: Mode,
    /// Its display name, shown as a transaction's `processor.name`.
    pub name: String,
    /// The account at the processor that handles its payments.
    pub account: ProcessorAccount,
    /// When the connection was created.
    pub created_on: OffsetDateTime,
}

impl ProcessorConnection {
    /// The processor software that handles its payments.
    pub fn kind(&self) -> ProcessorKind {
        self.account.kind()
    }
}

/// A merchant's pricing and routing: what each transaction costs and which connections it goes
/// to (the rule in the module docs).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The plan's id (`plan_` prefix), shown as a transaction's `plan.id`.
    pub id: PlanId,
    /// The platform that owns the plan.
    pub platform_id: PlatformId,
    /// The only mode whose payments it routes; every connection it names is of this mode.
    pub mode: Mode,
    /// Its display name, shown as a transaction's `plan.name`.
    pub name: String,
    /// What the plan charges the merchant per transaction.
    pub fee: FeeRule,
    /// Where a card goes when its brand has no route of its own.
    pub default_connection: ConnectionId,
    /// Brand-specific connections; a brand not listed goes to the default.
    pub brand_routes: Vec<(CardBrand, ConnectionId)>,
    /// Tried in order when the chosen connection is unavailable.
    pub fallbacks: Vec<ConnectionId>,
    /// The plan merchants of this platform and mode use when none is assigned.
    pub is_default: bool,
    /// When the plan was created.
    pub created_on: OffsetDateTime,
    /// How long its charges stay pending before they settle (docs/money.md).
    pub settlement_delay: crate::ledger::SettlementDelay,
}

impl Plan {
    /// The connections to try for a card of `brand`, in order, without repeats.
    pub fn route(&self, brand: CardBrand) -> Vec<ConnectionId> {
        let primary = self
            .brand_routes
            .iter()
            .find(|(b, _)| *b == brand)
            .map_or(&self.default_connection, |(_, c)| c);
        let mut order = vec![primary.clone()];
        for fallback in &self.fallbacks {
            if !order.contains(fallback) {
                order.push(fallback.clone());
            }
        }
        order
    }
}

/// Fallback connections a plan may list: each is tried in turn while processors are
/// unavailable, so the list bounds the calls one payment can make.
pub const MAX_FALLBACKS: usize = 4;

/// `count` fallbacks are within `MAX_FALLBACKS`.
pub fn fallbacks_within_bound(count: usize) -> Result<(), Invalid> {
    if count > MAX_FALLBACKS {
        return Err(Invalid::new(
            "fallbacks",
            format!("may list at most {MAX_FALLBACKS} connections"),
        ));
    }
    Ok(())
}

/// A name for a plan or a connection: 1 to 100 characters, trimmed.
pub fn resource_name(raw: &str) -> Result<String, Invalid> {
    bounded_text("name", raw, 1, 100)
}

#[cfg(test)]
mod tests {
    use super::*;
    use time::macros::datetime;

    fn plan(routes: Vec<(CardBrand, &str)>, fallbacks: Vec<&str>) -> Plan {
        Plan {
            id: PlanId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("1"),
            mode: Mode::Test,
            name: "Default".into(),
            fee: FeeRule::new(290, 30).unwrap(),
            default_connection: ConnectionId::from_suffix("default"),
            brand_routes: routes
                .into_iter()
                .map(|(b, c)| (b, ConnectionId::from_suffix(c)))
                .collect(),
            fallbacks: fallbacks
                .into_iter()
                .map(ConnectionId::from_suffix)
                .collect(),
            is_default: true,
            created_on: datetime!(2026-01-01 0:00 UTC),
            settlement_delay: crate::ledger::SettlementDelay::DEFAULT,
        }
    }

    fn ids(route: &[ConnectionId]) -> Vec<&str> {
        route.iter().map(ConnectionId::as_str).collect()
    }

    #[test]
    fn brand_route_then_default_then_fallbacks_without_repeats() {
        let p = plan(
            vec![(CardBrand::Amex, "amex")],
            vec!["backup", "default", "backup"],
        );
        assert_eq!(
            ids(&p.route(CardBrand::Amex)),
            ["midCon_amex", "midCon_backup", "midCon_default"]
        );
        assert_eq!(
            ids(&p.route(CardBrand::Visa)),
            ["midCon_default", "midCon_backup"]
        );
        let plain = plan(vec![], vec![]);
        assert_eq!(ids(&plain.route(CardBrand::Unknown)), ["midCon_default"]);
    }
}
