//! A payment's pending row, written before its processor is called, and with it, when the
//! request has one, the claim on its idempotency key: one atomic write, so a key is taken only
//! by a payment that is recorded, and a payment runs only under a key it took.

use diesel::QueryResult;
use diesel_async::{AsyncPgConnection, RunQueryDsl};
use holdfast_domain::idempotency::KeyClaim;
use holdfast_domain::payment::transaction::Transaction;

use super::idempotency::claim_key;
use crate::conn::{Conn, Db};
use crate::payment_rows::NewTxnRow;
use crate::pg_statement::{Bind, Statement};
use crate::schema::transactions as t;

/// The claim and the pending row in one statement on PostgreSQL: the row is inserted only when
/// the claim's insert returns a row, that is, when the key was free. The columns are
/// `NewTxnRow`'s, in its order (a test holds the two together).
const CLAIMED_PENDING_PG: &str = "\
WITH claim AS (
    INSERT INTO idempotency_keys (platform_id, mode, key, fingerprint, created_on)
    VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING 1
)
INSERT INTO transactions (id, platform_id, mode, merchant_id, kind, amount, currency,
    created_on, bin, brand, last4, funding, plan_id, plan_name, parent_id, refunded_amount,
    reference, metadata, state, fee, connection_id, connection_name, approved_amount, avs, cvv, partial,
    processor_code, processor_message, processor_transaction_id, status, decline_code)
SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
       ?, ?
  FROM claim";

/// `CLAIMED_PENDING_PG` for `x` under `claim`; it inserts one row, or none when the key is
/// taken.
pub(super) fn claimed_pending_statement<'a>(
    x: &'a Transaction,
    claim: &'a KeyClaim,
) -> Statement<'a> {
    let row = NewTxnRow::from(x);
    let mut binds = vec![
        Bind::Text(row.platform_id),
        Bind::Text(row.mode),
        Bind::Text(claim.key.as_str()),
        Bind::Bytes(&claim.fingerprint),
        Bind::Time(claim.at),
        Bind::Text(row.id),
        Bind::Text(row.platform_id),
        Bind::Text(row.mode),
        Bind::Text(row.merchant_id),
        Bind::Text(row.kind),
        Bind::BigInt(row.amount),
        Bind::Text(row.currency),
        Bind::Time(row.created_on),
        Bind::Text(row.bin),
        Bind::Text(row.brand),
        Bind::Text(row.last4),
        Bind::Text(row.funding),
        Bind::Text(row.plan_id),
        Bind::Text(row.plan_name),
        Bind::OptText(row.parent_id),
        Bind::BigInt(row.refunded_amount),
        Bind::OptText(row.reference),
        Bind::OwnedText(row.metadata.clone()),
    ];
    binds.extend(row.outcome.binds());
    Statement::new(CLAIMED_PENDING_PG, binds)
}

/// Writes `x` pending and, with a `claim`, claims its key with it: whether it was written
/// (`false`: the key was taken, nothing written).
pub(super) async fn insert_pending(
    conn: &mut Conn,
    x: &Transaction,
    claim: Option<&KeyClaim>,
) -> QueryResult<bool> {
    match (&conn.db, claim) {
        (Db::Pg(pg), _) => insert_pending_pg(pg, x, claim).await,
        (Db::Sqlite(_), None) => plain_insert(conn, x).await,
        // In process, where round trips cost nothing: the two inserts in one transaction.
        (Db::Sqlite(_), Some(claim)) => {
            conn.transaction(async |conn| {
                let scope = (x.platform_id.as_str(), x.mode.as_str());
                if claim_key(conn, scope, &claim.key, &claim.fingerprint, claim.at).await? == 0 {
                    return Ok(false);
                }
                plain_insert(conn, x).await
            })
            .await
        }
    }
}

/// `insert_pending` on PostgreSQL, through a shared reference: a batch sends several at once on
/// one connection (`group_commit`).
pub(super) async fn insert_pending_pg(
    pg: &AsyncPgConnection,
    x: &Transaction,
    claim: Option<&KeyClaim>,
) -> QueryResult<bool> {
    match claim {
        None => diesel::insert_into(t::table)
            .values(NewTxnRow::from(x))
            .execute(&mut { pg })
            .await
            .map(|_| true),
        Some(claim) => claimed_pending_statement(x, claim)
            .execute(&mut { pg })
            .await
            .map(|rows| rows == 1),
    }
}

async fn plain_insert(conn: &mut Conn, x: &Transaction) -> QueryResult<bool> {
    conn.execute(diesel::insert_into(t::table).values(NewTxnRow::from(x)))
        .await
        .map(|_| true)
}

#[cfg(test)]
mod tests {
    use diesel::pg::Pg;

    use super::*;

    /// The hand-written statement names the columns diesel's insert of `NewTxnRow` names, in
    /// the same order, so the binds built from the row land where they belong.
    #[test]
    fn the_claimed_insert_writes_the_columns_of_the_plain_one() {
        let x = crate::stores::transactions::tests::pending(None);
        let plain = diesel::debug_query::<Pg, _>(
            &diesel::insert_into(t::table).values(NewTxnRow::from(&x)),
        )
        .to_string();
        let columns = |sql: &str, after: &str| -> Vec<String> {
            let start = sql.find(after).expect("the insert") + after.len();
            let list = &sql[start..];
            let list = &list[list.find('(').unwrap() + 1..list.find(')').unwrap()];
            list.split(',')
                .map(|c| c.trim().trim_matches('"').to_owned())
                .collect()
        };
        assert_eq!(
            columns(CLAIMED_PENDING_PG, "INSERT INTO transactions"),
            columns(&plain, "INSERT INTO \"transactions\"")
        );
        let marks = CLAIMED_PENDING_PG.matches('?').count();
        let claim = KeyClaim {
            key: holdfast_domain::idempotency::IdempotencyKey::parse("k").unwrap(),
            fingerprint: [0; 32],
            at: x.created_on,
        };
        assert_eq!(
            marks,
            5 + columns(&plain, "INSERT INTO \"transactions\"").len()
        );
        // A statement whose binds do not match its marks fails to render.
        let statement = claimed_pending_statement(&x, &claim);
        let mut rendered = String::new();
        std::fmt::Write::write_fmt(
            &mut rendered,
            format_args!("{}", diesel::debug_query::<Pg, _>(&statement)),
        )
        .expect("one bind per mark");
    }
}
