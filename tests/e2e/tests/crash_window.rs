//! A create under an `Idempotency-Key` stores its answer in the SQL transaction of the change it
//! reports, so a SIGKILL at any point leaves both or neither: never a resource whose key has no
//! answer, which a retry (once the key is taken for abandoned) would create a second time.
//!
//! The kill lands exactly between the change and its answer: a trigger on `idempotency_keys`
//! makes the answer's write wait on an advisory lock the test holds. PostgreSQL only (SQLite has
//! no way to pause a writer between two statements).
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::{Duration, Instant};

use holdfast_e2e::routes::test_plan;
use holdfast_e2e::{Api, Backend, Env};
use tokio_postgres::Client;

const LOCK: i64 = 7_700_001;

/// Name, path, body (`{connection}` replaced), table the resource is written to.
const CREATES: &[(&str, &str, &str, &str)] = &[
    (
        "merchant",
        "/v1/merchants",
        r#"{"name": "Shop"}"#,
        "merchants",
    ),
    (
        "webhook",
        "/v1/webhooks",
        r#"{"endpointUrl": "https://example.com/h", "events": ["transaction.created"]}"#,
        "webhooks",
    ),
    (
        "token",
        "/v1/tokens",
        r#"{"type": "vault", "payment": {"number": "4111111111111111", "expiration": "1230"}}"#,
        "tokens",
    ),
    (
        "connection",
        "/v1/processor-connections",
        r#"{"name": "Backup", "kind": "sandbox"}"#,
        "processor_connections",
    ),
    (
        "plan",
        "/v1/plans",
        r#"{"name": "Gold", "fee": {"basisPoints": 200, "fixed": 0}, "defaultConnectionId": "{connection}"}"#,
        "plans",
    ),
];

async fn count(db: &Client, table: &str) -> i64 {
    db.query_one(&format!("SELECT count(*) FROM {table}"), &[])
        .await
        .unwrap()
        .get(0)
}

/// Rows of `table` and keys that have an answer, and keys still without one.
async fn state(db: &Client, table: &str) -> (i64, i64, i64) {
    let keys = db
        .query_one(
            "SELECT count(status), count(*) - count(status) FROM idempotency_keys",
            &[],
        )
        .await
        .unwrap();
    (count(db, table).await, keys.get(0), keys.get(1))
}

/// Backends of this database waiting for an advisory lock.
async fn waiting(db: &Client) -> i64 {
    db.query_one(
        "SELECT count(*) FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock'
            AND wait_event = 'advisory'",
        &[],
    )
    .await
    .unwrap()
    .get(0)
}

async fn until(what: &str, mut check: impl AsyncFnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(15);
    while !check().await {
        assert!(Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kill_between_a_create_and_its_answer_leaves_neither() {
    let Some(env) = Env::new(Backend::Postgres).await else {
        return;
    };
    let platform = env.create_platform("Acme");
    let key = &platform.private_key;
    let db = env.pg_client().await;
    db.batch_execute(&format!(
        "CREATE FUNCTION hold_answers() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN PERFORM pg_advisory_xact_lock({LOCK}); RETURN NEW; END $$;"
    ))
    .await
    .unwrap();
    let holder = env.pg_client().await;

    for (name, path, body, table) in CREATES {
        let mut server = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "false")]);
        let api = Api::new(&server);
        let (connection, _) = test_plan(&api, key).await;
        let body = body.replace("{connection}", &connection);
        let before = state(&db, table).await;

        db.batch_execute(
            "CREATE TRIGGER hold BEFORE UPDATE ON idempotency_keys
             FOR EACH ROW EXECUTE FUNCTION hold_answers()",
        )
        .await
        .unwrap();
        holder
            .execute("SELECT pg_advisory_lock($1)", &[&LOCK])
            .await
            .unwrap();
        // Sent by hand: the kill cuts it off, which `Api` would report as a failure.
        let sent = reqwest::Client::new()
            .post(server.url(path))
            .header("x-api-key", key.as_str())
            .header("idempotency-key", format!("{name}-killed"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send();
        let sent = tokio::spawn(sent);
        until(&format!("{name}: its answer waits"), async || {
            waiting(&db).await == 1
        })
        .await;
        server.stop_with("KILL");
        assert!(sent.await.unwrap().is_err(), "{name}: no answer came back");
        holder
            .execute("SELECT pg_advisory_unlock($1)", &[&LOCK])
            .await
            .unwrap();
        // The server's backend wakes, finds its client gone and rolls back.
        until(&format!("{name}: the dead backend is gone"), async || {
            waiting(&db).await == 0
        })
        .await;
        db.batch_execute("DROP TRIGGER hold ON idempotency_keys")
            .await
            .unwrap();
        let (rows, answered, unanswered) = state(&db, table).await;
        assert_eq!(
            (rows, answered),
            (before.0, before.1),
            "{name}: the {table} row and its answer are both gone"
        );
        assert_eq!(
            unanswered,
            before.2 + 1,
            "{name}: the key stays claimed, to be taken for abandoned"
        );
        // The client retries with the same key. While the key counts as running it is refused;
        // once it is taken for abandoned (5 minutes: the claim is aged here), the retry runs,
        // and since nothing was made, it makes the one resource.
        let server = env.serve_with(&[("HOLDFAST_BOOTSTRAP_DEMO", "false")]);
        let api = Api::new(&server);
        let killed_key = format!("{name}-killed");
        let running = api.post_once(path, key, &killed_key, &body).await;
        assert_eq!(
            running.status,
            reqwest::StatusCode::CONFLICT,
            "{}",
            running.text
        );
        db.batch_execute(
            "UPDATE idempotency_keys SET created_on = created_on - interval '6 minutes'
              WHERE status IS NULL",
        )
        .await
        .unwrap();
        let retried = api.post_once(path, key, &killed_key, &body).await;
        assert_eq!(
            retried.status,
            reqwest::StatusCode::CREATED,
            "{}",
            retried.text
        );
        let again = api.post_once(path, key, &killed_key, &body).await;
        // The replay is the answer as stored, which keeps no secret shown once.
        let mut stored = retried.body.clone();
        for shown_once in ["secret", "clientSecret", "url"] {
            stored.as_object_mut().unwrap().remove(shown_once);
        }
        assert_eq!(again.body, stored, "{name}: replayed");
        assert_eq!(
            state(&db, table).await,
            (before.0 + 1, before.1 + 1, before.2),
            "{name}: one row, one answer"
        );
    }
}
