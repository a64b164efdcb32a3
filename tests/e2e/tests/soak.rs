//! Nothing lost under SIGKILL: merchants are created at full speed while `holdfast serve`, which
//! delivers what it writes itself (handed off at insert, leased), is killed and started again
//! three times. Afterwards every merchant whose `POST` was answered 201 has had its
//! `merchant.created` delivered at least once; duplicates are counted and reported, never
//! failed on (delivery is at least once, and receivers dedupe on `webhook-id`). The long
//! version, with a separate `holdfast worker` killed too, is `bench/soak.sh`.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use holdfast_e2e::{Answer, Api, Env, Receiver, Server, on_both_backends};
use reqwest::StatusCode;

/// A lease of 5 × 300 ms + 7 × 20 ms: a killed process's notifications are claimed again
/// within two seconds.
const VARS: &[(&str, &str)] = &[
    ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
    ("HOLDFAST_WEBHOOK_ALLOW_NETWORKS", "127.0.0.0/8"),
    ("HOLDFAST_WEBHOOK_TIMEOUT_MS", "300"),
    ("HOLDFAST_WEBHOOK_BACKOFF_BASE_MS", "20"),
    ("HOLDFAST_WORKER_POLL_MS", "20"),
];

const CLIENTS: usize = 8;
const KILLS: usize = 3;
/// Each kill lands only once the load has had this many merchants answered since the start,
/// however slow the machine (a loaded CI box with a debug build made 83 in three fixed 700 ms
/// rounds): the kill must come under load, and the count proves there was load.
const ANSWERED_PER_ROUND: usize = 60;
/// The least a round's load runs before its kill, so the kill lands while deliveries are in
/// flight.
const LOAD_AT_LEAST: Duration = Duration::from_millis(700);
/// The most a round waits for its merchants: a server that cannot answer that many in this long
/// is broken, and the assertion below says so.
const LOAD_AT_MOST: Duration = Duration::from_secs(20);

/// Creates merchants on `CLIENTS` connections until `stop`, counting each answered 201 in
/// `answered`; the ids of those answered 201. Requests that fail (the server was killed under
/// them) are not counted: their outcome is unknown to the client, as it would be to a real one.
async fn create_until(
    base_url: String,
    key: String,
    stop: Arc<AtomicBool>,
    answered: Arc<AtomicUsize>,
) -> Vec<String> {
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for _ in 0..CLIENTS {
        let (client, url, key, stop, answered) = (
            client.clone(),
            format!("{base_url}/v1/merchants"),
            key.clone(),
            stop.clone(),
            answered.clone(),
        );
        tasks.push(tokio::spawn(async move {
            let mut created = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                let sent = client
                    .post(&url)
                    .header("x-api-key", &key)
                    .header("content-type", "application/json")
                    .body(r#"{"name": "Soak shop"}"#)
                    .send()
                    .await;
                let Ok(reply) = sent else {
                    // The server is gone: wait for the next one.
                    break;
                };
                if reply.status() != StatusCode::CREATED {
                    continue;
                }
                let Ok(body) = reply.json::<serde_json::Value>().await else {
                    break;
                };
                created.push(body["id"].as_str().unwrap().to_owned());
                answered.fetch_add(1, Ordering::Relaxed);
            }
            created
        }));
    }
    let mut created = Vec::new();
    for task in tasks {
        created.extend(task.await.unwrap());
    }
    created
}

/// Merchant ids delivered to the receiver, with how many requests each took.
fn delivered(receiver: &Receiver) -> HashMap<String, usize> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    for request in receiver.received() {
        let id = request.json()["data"]["id"].as_str().unwrap().to_owned();
        *seen.entry(id).or_default() += 1;
    }
    seen
}

async fn every_answered_merchant_is_delivered_across_kills(env: Env) {
    let receiver = Receiver::start(Answer::status(204)).await;
    let platform = env.create_platform("Soak");
    let key = platform.private_key.clone();
    let mut server: Server = env.serve_with(VARS);
    let body = format!(
        r#"{{"endpointUrl": "{}", "events": ["merchant.created"]}}"#,
        receiver.url
    );
    let hook = Api::new(&server).post("/v1/webhooks", &key, &body).await;
    assert_eq!(hook.status, StatusCode::CREATED, "{}", hook.text);

    let mut answered = Vec::new();
    let count = Arc::new(AtomicUsize::new(0));
    for round in 1..=KILLS {
        let stop = Arc::new(AtomicBool::new(false));
        let load = tokio::spawn(create_until(
            server.base_url.clone(),
            key.clone(),
            stop.clone(),
            count.clone(),
        ));
        let started = Instant::now();
        tokio::time::sleep(LOAD_AT_LEAST).await;
        while count.load(Ordering::Relaxed) < round * ANSWERED_PER_ROUND
            && started.elapsed() < LOAD_AT_MOST
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        server.stop_with("KILL");
        stop.store(true, Ordering::Relaxed);
        answered.extend(load.await.unwrap());
        server = env.serve_with(VARS);
    }
    assert!(
        answered.len() >= KILLS * ANSWERED_PER_ROUND,
        "the load made too few merchants to say anything: {}",
        answered.len()
    );

    let deadline = Instant::now() + Duration::from_secs(30);
    let missing = loop {
        let seen = delivered(&receiver);
        let missing: Vec<&String> = answered
            .iter()
            .filter(|id| !seen.contains_key(*id))
            .collect();
        if missing.is_empty() || Instant::now() > deadline {
            break missing.len();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let seen = delivered(&receiver);
    let duplicates: usize = seen.values().map(|n| n - 1).sum();
    let unique: HashSet<&String> = answered.iter().collect();
    eprintln!(
        "soak: {} merchants answered 201 across {KILLS} kills; {} delivered, {duplicates} \
         duplicate requests, {missing} missing",
        unique.len(),
        seen.len()
    );
    assert_eq!(
        missing,
        0,
        "every merchant answered 201 is delivered at least once\n{}",
        server.log()
    );
}

on_both_backends!(every_answered_merchant_is_delivered_across_kills);
