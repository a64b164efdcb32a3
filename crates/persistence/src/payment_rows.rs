//! Rows of the payments tables and their conversion to domain types.
// `AsChangeset` borrows each field of `CompletedRow`, so its optional text is seen as an
// `&Option<&str>` in code the derive writes, where no narrower attribute reaches.
#![expect(
    clippy::ref_option_ref,
    reason = "diesel's AsChangeset derive borrows `CompletedRow::decline_code`"
)]

use diesel::{AsChangeset, Insertable, Queryable};
use holdfast_domain::ids::{ConnectionId, MerchantId, PlanId, PlatformId, TxnId};
use holdfast_domain::ledger::SettlementDelay;
use holdfast_domain::merchant::Currency;
use holdfast_domain::payment::decline::DeclineCode;
use holdfast_domain::payment::fee::FeeRule;
use holdfast_domain::payment::labels::Reference;
use holdfast_domain::payment::routing::{Plan, ProcessorConnection};
use holdfast_domain::payment::transaction::{Authorization, Named, PaymentSummary, Transaction};
use holdfast_domain::ports::StoreError;
use time::OffsetDateTime;

use crate::account_rows::{account_column, account_of};
use crate::pg_statement::Bind;
use crate::rows::{corrupt, metadata_column, parse, stored_metadata};
use crate::schema::{plan_routes, plans, processor_connections, transactions};
use crate::timestamp::Instant;

#[derive(Debug, Queryable)]
pub struct ConnectionRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub name: String,
    pub kind: String,
    pub created_on: OffsetDateTime,
    pub account: Option<String>,
}

impl TryFrom<ConnectionRow> for ProcessorConnection {
    type Error = StoreError;
    fn try_from(row: ConnectionRow) -> Result<Self, StoreError> {
        Ok(Self {
            id: ConnectionId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            name: row.name,
            account: account_of(parse("processor kind", &row.kind)?, row.account.as_deref())?,
            created_on: row.created_on,
        })
    }
}

#[derive(Debug, Queryable)]
pub struct PlanRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub name: String,
    pub fee_basis_points: i64,
    pub fee_fixed: i64,
    pub default_connection_id: String,
    pub is_default: bool,
    pub created_on: OffsetDateTime,
    pub settlement_delay_days: i32,
}

/// One of a plan's routes: a brand route names its brand, a fallback has none.
#[derive(Debug, Queryable)]
pub struct RouteRow {
    pub plan_id: String,
    pub position: i32,
    pub brand: Option<String>,
    pub connection_id: String,
}

#[derive(Debug, Insertable)]
#[diesel(table_name = plan_routes, treat_none_as_default_value = false)]
pub struct NewRouteRow<'a> {
    pub plan_id: &'a str,
    pub position: i32,
    pub brand: Option<String>,
    pub connection_id: &'a str,
}

/// `plan`'s routes in its order: the brand routes, then the fallbacks.
pub fn route_rows(plan: &Plan) -> Vec<NewRouteRow<'_>> {
    let brands = plan
        .brand_routes
        .iter()
        .map(|(brand, id)| (Some(brand.as_str().to_owned()), id));
    let fallbacks = plan.fallbacks.iter().map(|id| (None, id));
    brands
        .chain(fallbacks)
        .zip(0..)
        .map(|((brand, id), position)| NewRouteRow {
            plan_id: plan.id.as_str(),
            position,
            brand,
            connection_id: id.as_str(),
        })
        .collect()
}

impl PlanRow {
    /// The plan, with `routes` (its own, in position order).
    pub fn with_routes(self, routes: Vec<RouteRow>) -> Result<Plan, StoreError> {
        let mut brand_routes = Vec::new();
        let mut fallbacks = Vec::new();
        for route in routes {
            let id = ConnectionId::from_trusted(route.connection_id);
            match route.brand {
                Some(brand) => brand_routes.push((parse("brand", &brand)?, id)),
                None => fallbacks.push(id),
            }
        }
        let row = self;
        Ok(Plan {
            id: PlanId::from_trusted(row.id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("mode", &row.mode)?,
            name: row.name,
            fee: FeeRule::new(row.fee_basis_points, row.fee_fixed)
                .map_err(|e| corrupt("fee", e))?,
            default_connection: ConnectionId::from_trusted(row.default_connection_id),
            brand_routes,
            fallbacks,
            is_default: row.is_default,
            created_on: row.created_on,
            settlement_delay: SettlementDelay::new(
                "settlement_delay_days",
                i64::from(row.settlement_delay_days),
            )
            .map_err(|e| corrupt("settlement delay", e))?,
        })
    }
}

#[derive(Debug, Queryable)]
pub struct TxnRow {
    pub id: String,
    pub platform_id: String,
    pub mode: String,
    pub merchant_id: String,
    pub kind: String,
    pub state: String,
    pub amount: i64,
    pub currency: String,
    pub fee: i64,
    pub created_on: OffsetDateTime,
    pub bin: String,
    pub brand: String,
    pub last4: String,
    pub funding: String,
    pub plan_id: String,
    pub plan_name: String,
    pub connection_id: String,
    pub connection_name: String,
    pub approved_amount: i64,
    pub avs: String,
    pub cvv: String,
    pub partial: bool,
    pub processor_code: String,
    pub processor_message: String,
    pub processor_transaction_id: String,
    pub status: String,
    pub parent_id: Option<String>,
    pub refunded_amount: i64,
    pub decline_code: Option<String>,
    pub reference: Option<String>,
    pub metadata: String,
}

impl TryFrom<TxnRow> for Transaction {
    type Error = StoreError;
    fn try_from(row: TxnRow) -> Result<Self, StoreError> {
        Ok(Self {
            id: TxnId::from_trusted(row.id),
            kind: parse("type", &row.kind)?,
            merchant_id: MerchantId::from_trusted(row.merchant_id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            amount: row.amount,
            currency: Currency::from_stored(&row.currency)
                .ok_or_else(|| corrupt("currency", "not a currency code"))?,
            fee: row.fee,
            created_on: row.created_on,
            payment: PaymentSummary {
                bin: row.bin,
                brand: parse("brand", &row.brand)?,
                last4: row.last4,
                funding: parse("funding", &row.funding)?,
            },
            plan: Named {
                id: PlanId::from_trusted(row.plan_id),
                name: row.plan_name,
            },
            processor: Named {
                id: ConnectionId::from_trusted(row.connection_id),
                name: row.connection_name,
            },
            authorization: Authorization {
                approved_amount: row.approved_amount,
                avs: parse("avs", &row.avs)?,
                cvv: parse("cvv", &row.cvv)?,
                partial: row.partial,
                processor_code: row.processor_code,
                decline_code: row
                    .decline_code
                    .map(|code| parse("decline_code", &code))
                    .transpose()?,
                processor_message: row.processor_message,
                processor_transaction_id: row.processor_transaction_id,
                status: parse("status", &row.status)?,
            },
            mode: parse("mode", &row.mode)?,
            state: parse("state", &row.state)?,
            parent_id: row.parent_id.map(TxnId::from_trusted),
            refunded_amount: row.refunded_amount,
            reference: row.reference.map(Reference::from_trusted),
            metadata: stored_metadata(&row.metadata)?,
        })
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = processor_connections, treat_none_as_default_value = false)]
pub struct NewConnectionRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub name: &'a str,
    pub kind: &'static str,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    pub account: Option<String>,
}

impl<'a> From<&'a ProcessorConnection> for NewConnectionRow<'a> {
    fn from(c: &'a ProcessorConnection) -> Self {
        Self {
            id: c.id.as_str(),
            platform_id: c.platform_id.as_str(),
            mode: c.mode.as_str(),
            name: &c.name,
            kind: c.kind().as_str(),
            created_on: c.created_on,
            account: account_column(&c.account),
        }
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = plans, treat_none_as_default_value = false)]
pub struct NewPlanRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub name: &'a str,
    pub fee_basis_points: i64,
    pub fee_fixed: i64,
    pub default_connection_id: &'a str,
    pub is_default: bool,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    pub settlement_delay_days: i32,
}

impl<'a> From<&'a Plan> for NewPlanRow<'a> {
    fn from(p: &'a Plan) -> Self {
        Self {
            id: p.id.as_str(),
            platform_id: p.platform_id.as_str(),
            mode: p.mode.as_str(),
            name: &p.name,
            fee_basis_points: i64::from(p.fee.basis_points()),
            fee_fixed: p.fee.fixed(),
            default_connection_id: p.default_connection.as_str(),
            is_default: p.is_default,
            created_on: p.created_on,
            settlement_delay_days: i32::from(p.settlement_delay.days()),
        }
    }
}

/// What a transaction's completion writes: the processor's answer and what follows from it.
#[derive(Debug, AsChangeset, Insertable)]
#[diesel(table_name = transactions, treat_none_as_default_value = false)]
pub struct CompletedRow<'a> {
    pub state: &'static str,
    pub fee: i64,
    pub connection_id: &'a str,
    pub connection_name: &'a str,
    pub approved_amount: i64,
    pub avs: &'static str,
    pub cvv: &'static str,
    pub partial: bool,
    pub processor_code: &'a str,
    pub processor_message: &'a str,
    pub processor_transaction_id: &'a str,
    pub status: &'static str,
    pub decline_code: Option<&'a str>,
}

impl<'a> CompletedRow<'a> {
    /// Its columns' values in its order, for a hand-written statement's `?` marks.
    pub fn binds(&self) -> [Bind<'a>; 13] {
        [
            Bind::Text(self.state),
            Bind::BigInt(self.fee),
            Bind::Text(self.connection_id),
            Bind::Text(self.connection_name),
            Bind::BigInt(self.approved_amount),
            Bind::Text(self.avs),
            Bind::Text(self.cvv),
            Bind::Bool(self.partial),
            Bind::Text(self.processor_code),
            Bind::Text(self.processor_message),
            Bind::Text(self.processor_transaction_id),
            Bind::Text(self.status),
            Bind::OptText(self.decline_code),
        ]
    }
}

impl<'a> From<&'a Transaction> for CompletedRow<'a> {
    fn from(x: &'a Transaction) -> Self {
        let a = &x.authorization;
        Self {
            state: x.state.as_str(),
            fee: x.fee,
            connection_id: x.processor.id.as_str(),
            connection_name: &x.processor.name,
            approved_amount: a.approved_amount,
            avs: a.avs.as_str(),
            cvv: a.cvv.as_str(),
            partial: a.partial,
            processor_code: &a.processor_code,
            processor_message: &a.processor_message,
            processor_transaction_id: &a.processor_transaction_id,
            status: a.status.as_str(),
            decline_code: a.decline_code.map(DeclineCode::as_str),
        }
    }
}

/// A transaction as first written, pending its processor's answer.
#[derive(Debug, Insertable)]
#[diesel(table_name = transactions, treat_none_as_default_value = false)]
pub struct NewTxnRow<'a> {
    pub id: &'a str,
    pub platform_id: &'a str,
    pub mode: &'static str,
    pub merchant_id: &'a str,
    pub kind: &'static str,
    pub amount: i64,
    pub currency: &'a str,
    #[diesel(serialize_as = Instant)]
    pub created_on: OffsetDateTime,
    pub bin: &'a str,
    pub brand: &'static str,
    pub last4: &'a str,
    pub funding: &'static str,
    pub plan_id: &'a str,
    pub plan_name: &'a str,
    pub parent_id: Option<&'a str>,
    pub refunded_amount: i64,
    pub reference: Option<&'a str>,
    /// A JSON object of strings.
    pub metadata: String,
    #[diesel(embed)]
    pub outcome: CompletedRow<'a>,
}

impl<'a> From<&'a Transaction> for NewTxnRow<'a> {
    fn from(x: &'a Transaction) -> Self {
        Self {
            id: x.id.as_str(),
            platform_id: x.platform_id.as_str(),
            mode: x.mode.as_str(),
            merchant_id: x.merchant_id.as_str(),
            kind: x.kind.as_str(),
            amount: x.amount,
            currency: x.currency.as_str(),
            created_on: x.created_on,
            bin: &x.payment.bin,
            brand: x.payment.brand.as_str(),
            last4: &x.payment.last4,
            funding: x.payment.funding.as_str(),
            plan_id: x.plan.id.as_str(),
            plan_name: &x.plan.name,
            parent_id: x.parent_id.as_ref().map(TxnId::as_str),
            refunded_amount: x.refunded_amount,
            reference: x.reference.as_ref().map(Reference::as_str),
            metadata: metadata_column(&x.metadata),
            outcome: CompletedRow::from(x),
        }
    }
}
