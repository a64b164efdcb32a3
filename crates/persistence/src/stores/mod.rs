//! The store adapters. Every query is written once (in the macros of the sibling files) and
//! compiled twice, against the PostgreSQL and the SQLite schema and connection types, so the two
//! backends cannot drift apart.

/// `$query` newest first (by `$id` descending) from `$page`'s cursor, one row more than the page
/// so `Page::from_overfetch` can tell whether there is more; boxed.
macro_rules! newest_first {
    ($query:expr, $id:expr, $page:expr) => {{
        let page: &PageRequest = $page;
        let mut query = $query
            .order($id.desc())
            .limit(page.fetch_count())
            .into_boxed();
        if let Some(cursor) = &page.starting_after {
            query = query.filter($id.lt(cursor.as_str()));
        }
        query
    }};
}

#[macro_use]
mod outbox;
#[macro_use]
mod idempotency;
#[macro_use]
mod keys;
#[macro_use]
mod merchants;
#[macro_use]
mod payments;
#[macro_use]
mod platforms;
#[macro_use]
mod notifications;
#[macro_use]
mod tokens;
#[macro_use]
mod webhooks;
mod claim;
mod completion;

use crate::webhook_rows::{NotificationRow, WebhookRow};
use diesel::prelude::*;
use diesel::sqlite::SqliteConnection;
use diesel_async::pooled_connection::deadpool::{Object, Pool};
use diesel_async::sync_connection_wrapper::SyncConnectionWrapper;
use diesel_async::{AsyncConnection, AsyncPgConnection, RunQueryDsl};
use holdfast_domain::api_key::{ApiKey, KeyHash, KeyName, KeyStatus};
use holdfast_domain::idempotency::{
    IdempotencyKey, KeyRecord, KeyedResponse, Seen, StoredResponse, on_seen,
};
use holdfast_domain::ids::{
    ConnectionId, KeyId, MerchantId, PlanId, PlatformId, TokenId, TxnId, UserId,
};
use holdfast_domain::ids::{EventId, NotificationId, WebhookId};
use holdfast_domain::merchant::{Merchant, MerchantPatch};
use holdfast_domain::mode::Mode;
use holdfast_domain::page::{Page, PageRequest};
use holdfast_domain::payment::lifecycle::{TxnState, TxnType};
use holdfast_domain::payment::routing::{Plan, ProcessorConnection};
use holdfast_domain::payment::token::{Token, TokenKind};
use holdfast_domain::payment::transaction::Transaction;
use holdfast_domain::platform::Platform;
use holdfast_domain::ports::StoreError;
use holdfast_domain::ports::{
    Begun, ClaimLimits, Claimed, Deleted, Delivery, Event, EventData, Finished, NewPlatform,
    OriginalOutcome, OutgoingEmail, PaymentSetup, QueuedEmail, Recorded, Replacement, ResendError,
    Reservation, StoredEvent, TxnFilter, disable_email, encode_events,
};
use holdfast_domain::user::{Email, User};
use holdfast_domain::webhook::{EventType, Outcome, Subscription, failure_disables};
use merchants::merchant_event;
use time::OffsetDateTime;

use crate::error::{expect_one_row, query_error, unexpected};
use crate::payment_rows::{
    ConnectionRow, EventRow, PlanRow, TokenRow, TxnRow, encode_ids, encode_routes,
};
use crate::rows::{KeyRow, MerchantRow, PlatformRow, UserRow, convert_all};

pub type SqliteConn = SyncConnectionWrapper<SqliteConnection>;

/// What differs between the backends beyond the schema's timestamp type.
pub trait Backend {
    type Conn;
    /// Taken first in the transaction that creates the first platform, so concurrent callers
    /// queue behind it before checking that no platform exists.
    const FIRST_PLATFORM_LOCK: &'static str;
    /// Taken first in a queue claim where rows cannot be locked one by one (SQLite): the claim
    /// then holds the write lock from its first read, so two processes on one file never race
    /// to upgrade a read into a write.
    const QUEUE_WRITE_LOCK: Option<&'static str>;
    /// Taken first when creating a webhook subscription, so the count of the platform's
    /// subscriptions that follows sees every create committed before it.
    const WEBHOOK_CREATE_LOCK: &'static str;
    /// Taken first in a notification claim, so claimers take turns and each sees the leases
    /// the previous one wrote: the in-flight caps are then exact across worker processes.
    const NOTIFICATION_CLAIM_LOCK: &'static str;
}

macro_rules! sql_store {
    ($(#[$doc:meta])* $store:ident, $conn:ty, $schema:ident, $first_platform_lock:expr, $queue_write_lock:expr, $webhook_create_lock:expr, $notification_claim_lock:expr, [$($claim_lock:ident),*]) => {
        $(#[$doc])*
        #[derive(Clone)]
        pub struct $store {
            pool: Pool<$conn>,
            completion_wait: std::time::Duration,
        }

        impl Backend for $store {
            type Conn = $conn;
            const FIRST_PLATFORM_LOCK: &'static str = $first_platform_lock;
            const QUEUE_WRITE_LOCK: Option<&'static str> = $queue_write_lock;
            const WEBHOOK_CREATE_LOCK: &'static str = $webhook_create_lock;
            const NOTIFICATION_CLAIM_LOCK: &'static str = $notification_claim_lock;
        }

        impl std::fmt::Debug for $store {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($store))
                    .field("pool", &self.pool.status())
                    .finish()
            }
        }

        impl $store {
            pub fn new(pool: Pool<$conn>, completion_wait: std::time::Duration) -> Self {
                Self {
                    pool,
                    completion_wait,
                }
            }

            async fn conn(&self) -> Result<Object<$conn>, StoreError> {
                self.pool.get().await.map_err(unexpected)
            }

            /// A checkout that waits up to `wait` rather than the pool's own timeout.
            async fn conn_within(
                &self,
                wait: std::time::Duration,
            ) -> Result<Object<$conn>, StoreError> {
                let timeouts = deadpool::managed::Timeouts {
                    wait: Some(wait),
                    ..self.pool.timeouts()
                };
                self.pool.timeout_get(&timeouts).await.map_err(unexpected)
            }

            /// Whether the database answers a trivial query.
            pub async fn ping(&self) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                diesel::sql_query("SELECT 1")
                    .execute(&mut conn)
                    .await
                    .map(drop)
                    .map_err(unexpected)
            }
        }

        platform_and_user_stores!($store, $schema);
        key_store!($store, $schema);
        merchant_store!($store, $schema);
        payment_store!($store, $schema);
        idempotency_store!($store, $schema);
        token_store!($store, $schema);
        webhook_store!($store, $schema);
        notification_queue!($store, $schema, [$($claim_lock),*]);
    };
}

sql_store!(
    /// All store ports on PostgreSQL, through a deadpool of `AsyncPgConnection`s.
    PgStore,
    AsyncPgConnection,
    pg,
    "SELECT pg_advisory_xact_lock(4857326011373040244)",
    None,
    // Creating a subscription is rare: one lock for all platforms keeps it simple.
    "SELECT pg_advisory_xact_lock(4857326011373040245)",
    "SELECT pg_advisory_xact_lock(4857326011373040246)",
    [for_update, skip_locked]
);
sql_store!(
    /// All store ports on SQLite, through diesel-async's `SyncConnectionWrapper`.
    SqliteStore,
    SqliteConn,
    sqlite,
    // A write that changes nothing still takes SQLite's write lock for the transaction.
    "UPDATE platforms SET id = id WHERE 0",
    Some("UPDATE platforms SET id = id WHERE 0"),
    "UPDATE platforms SET id = id WHERE 0",
    "UPDATE platforms SET id = id WHERE 0",
    []
);
