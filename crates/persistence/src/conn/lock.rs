//! The locks a transaction takes first, per backend.

use super::{Conn, Db};

/// A lock taken first in a transaction, to serialise the writers that check something before
/// they write it.
#[derive(Debug, Clone, Copy)]
pub enum Lock {
    /// Concurrent bootstraps queue here before checking that no platform exists.
    FirstPlatform,
    /// The count of a platform's subscriptions that follows sees every create committed before.
    WebhookCreate,
    /// Notification claimers take turns and see each other's leases, so the in-flight caps are
    /// exact across worker processes.
    NotificationClaim,
    /// Compliance forms are issued one at a time, so a check that the merchant has none this
    /// year holds until the insert.
    ComplianceIssue,
    /// Where rows cannot be locked one by one (SQLite), a queue claim holds the write lock from
    /// its first read, so two processes on one file never race to upgrade a read into a write.
    QueueWrite,
    /// Settlement runs take turns, so two workers never settle the same charges at once.
    SettlementRun,
    /// Payouts are made one at a time, so each reads the available balance the last one left
    /// and two can never take the same money.
    Payouts,
}

impl Lock {
    pub(super) fn statement(self, conn: &Conn) -> Option<&'static str> {
        match (&conn.db, self) {
            (Db::Pg(_), Self::FirstPlatform) => {
                Some("SELECT pg_advisory_xact_lock(4857326011373040244)")
            }
            // Creating a subscription is rare: one lock for all platforms keeps it simple.
            (Db::Pg(_), Self::WebhookCreate) => {
                Some("SELECT pg_advisory_xact_lock(4857326011373040245)")
            }
            // Bitmap scans off for the claim that follows (docs/decisions.md, "The claim
            // reads its indexes one entry at a time"): only a plain index scan marks the dead
            // entries that finished rows leave in the partial indexes, so later claims skip them.
            // And a plan of its own, for the claim and the lease and read that follow: their
            // caps and lists shape it, where a delivery connection's other statements keep
            // their generic plans (`database::connect::DELIVERY_PLANNING`).
            (Db::Pg(_), Self::NotificationClaim) => Some(
                "SELECT pg_advisory_xact_lock(4857326011373040246), \
                        set_config('enable_bitmapscan', 'off', true), \
                        set_config('plan_cache_mode', 'force_custom_plan', true)",
            ),
            (Db::Pg(_), Self::ComplianceIssue) => {
                Some("SELECT pg_advisory_xact_lock(4857326011373040247)")
            }
            (Db::Pg(_), Self::SettlementRun) => {
                Some("SELECT pg_advisory_xact_lock(4857326011373040248)")
            }
            (Db::Pg(_), Self::Payouts) => Some("SELECT pg_advisory_xact_lock(4857326011373040249)"),
            // PostgreSQL locks the claimed rows themselves (`FOR UPDATE SKIP LOCKED`).
            (Db::Pg(_), Self::QueueWrite) => None,
            // A write that changes nothing still takes SQLite's write lock for the transaction.
            (Db::Sqlite(_), _) => Some("UPDATE platforms SET id = id WHERE 0"),
        }
    }
}
