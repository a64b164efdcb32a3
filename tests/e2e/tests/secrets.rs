//! Key values never reach the database or a log: only a SHA-256 hash and the last four
//! characters are stored, and nothing secret is logged, even at debug level.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::fmt::Write as _;

use holdfast_domain::api_key::KeyHash;
use holdfast_e2e::{Api, Backend, Env, contains, on_both_backends};
use reqwest::StatusCode;

async fn key_values_are_neither_stored_nor_logged(env: Env) {
    let platform = env.create_platform("Acme");
    let (private_id, private) = env.create_key(&platform.id, "private", "live");
    let (_, public) = env.create_key(&platform.id, "public", "test");
    let unknown = "priv_ZYXWVUTSRQPONMLKJIHGFEDCBA";
    let mut server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_LOG", "debug"),
    ]);
    let api = Api::new(&server);

    assert_eq!(
        api.get("/v1/merchants", &private).await.status,
        StatusCode::OK
    );
    let created = api
        .post("/v1/merchants", &private, r#"{"name": "Shop"}"#)
        .await;
    assert_eq!(created.status, StatusCode::CREATED);
    assert_eq!(
        api.get("/v1/merchants", &public).await.status,
        StatusCode::FORBIDDEN
    );
    assert_eq!(
        api.get("/v1/merchants", unknown).await.status,
        StatusCode::UNAUTHORIZED
    );
    assert_eq!(
        api.get("/v1/merchants", &platform.private_key).await.status,
        StatusCode::OK
    );
    env.cli_json(&[
        "keys",
        "deactivate",
        "--platform",
        &platform.id,
        &private_id,
    ]);
    assert_eq!(
        api.get("/v1/merchants", &private).await.status,
        StatusCode::UNAUTHORIZED
    );

    let request_id = created.headers["x-request-id"].to_str().unwrap().to_owned();
    assert!(server.terminate().success());
    let values = [
        &private,
        &public,
        unknown,
        &platform.private_key,
        &platform.public_key,
    ];

    // The log is real and detailed (debug level: queries too) and holds the requests we made…
    let log = server.output();
    assert!(
        log.contains(&request_id),
        "the captured log is the server's"
    );
    assert!(
        log.contains("\"status\":401") && log.contains("DEBUG"),
        "{log}"
    );
    for value in values {
        assert!(!log.contains(value), "a key value is in the server log");
        assert!(
            !log.contains(&value[value.len() - 26..]),
            "a key's secret part is in the log"
        );
    }
    // …and the database holds the keys, as hashes.
    let dump = env.dump().await;
    for value in &values[..2] {
        let hash = KeyHash::of(value);
        let stored = match env.backend {
            Backend::Sqlite => contains(&dump, hash.as_bytes()),
            Backend::Postgres => {
                let hex = hash
                    .as_bytes()
                    .iter()
                    .fold(String::from("\\x"), |mut s, b| {
                        let _ = write!(s, "{b:02x}");
                        s
                    });
                contains(&dump, hex.as_bytes())
            }
        };
        assert!(stored, "the hash of a generated key is in the database");
    }
    for value in values {
        assert!(
            !contains(&dump, value.as_bytes()),
            "a key value is in the database"
        );
        // Not even the secret part without its prefix.
        let secret = &value[value.len() - 26..];
        assert!(
            !contains(&dump, secret.as_bytes()),
            "a key's secret part is in the database"
        );
    }
}

on_both_backends!(key_values_are_neither_stored_nor_logged);
