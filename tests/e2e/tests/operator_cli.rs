//! The dashboard-only operations (spec 4.6) through the operator CLI, observed through the API:
//! key states of spec 3.1, the prefix table of spec 2.1, default keys, users.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use holdfast_e2e::{Api, Env, on_both_backends};
use reqwest::StatusCode;
use serde_json::Value;

fn is_secret_shaped(value: &str, prefix: &str) -> bool {
    value
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.len() == 26 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

async fn platform_create_prints_owner_and_default_keys_once(env: Env) {
    let out = env.cli_json(&[
        "platforms",
        "create",
        "--name",
        "Acme",
        "--owner-email",
        "Owner@Acme.test",
    ]);
    assert!(out["platform"]["id"].as_str().unwrap().starts_with("pfm_"));
    assert!(out["user"]["id"].as_str().unwrap().starts_with("usr_"));
    assert_eq!(out["user"]["email"], "Owner@acme.test");
    let keys = out["keys"].as_array().unwrap();
    let summary: Vec<_> = keys
        .iter()
        .map(|k| {
            (
                k["name"].as_str().unwrap(),
                k["type"].as_str().unwrap(),
                k["mode"].as_str().unwrap(),
                k["active"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("Default Private Key", "private", "test", true),
            ("Default Public Key", "public", "test", true)
        ]
    );
    assert!(is_secret_shaped(
        keys[0]["value"].as_str().unwrap(),
        "priv_test_"
    ));
    assert!(is_secret_shaped(
        keys[1]["value"].as_str().unwrap(),
        "pub_test_"
    ));
    for key in keys {
        assert_eq!(key["createdBy"], out["user"]["id"]);
    }

    // Listing never shows a value again.
    let platform = out["platform"]["id"].as_str().unwrap();
    let list = env.cli(&["--json", "keys", "list", "--platform", platform]);
    assert!(list.success, "{}", list.stderr);
    for key in keys {
        assert!(!list.stdout.contains(key["value"].as_str().unwrap()));
    }
    let listed: Value = serde_json::from_str(&list.stdout).unwrap();
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .all(|k| k.get("value").is_none() && k["last4"].as_str().unwrap().len() == 4)
    );
}

async fn generated_keys_follow_the_prefix_table(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let table = [
        ("public", "test", "pub_test_", StatusCode::FORBIDDEN),
        ("public", "live", "pub_", StatusCode::FORBIDDEN),
        ("private", "test", "priv_test_", StatusCode::OK),
        ("private", "live", "priv_", StatusCode::OK),
    ];
    for (key_type, mode, prefix, on_merchants) in table {
        let out = env.cli_json(&[
            "keys",
            "create",
            "--platform",
            &platform.id,
            "--name",
            "Backend",
            "--type",
            key_type,
            "--mode",
            mode,
        ]);
        let value = out["value"].as_str().unwrap();
        assert!(
            is_secret_shaped(value, prefix),
            "{key_type} {mode}: {value}"
        );
        assert_eq!(
            (
                out["type"].as_str(),
                out["mode"].as_str(),
                out["active"].as_bool()
            ),
            (Some(key_type), Some(mode), Some(true))
        );
        assert_eq!(out["last4"], &value[value.len() - 4..]);
        // Usable at once (spec 3.1), with the access of its type.
        assert_eq!(
            api.get("/v1/merchants", value).await.status,
            on_merchants,
            "{key_type} {mode}"
        );
    }
}

async fn key_states_of_spec_3_1_as_seen_by_the_api(env: Env) {
    let platform = env.create_platform("Acme");
    let server = env.serve();
    let api = Api::new(&server);
    let (id, value) = env.create_key(&platform.id, "private", "test");
    let status = || async { api.get("/v1/merchants", &value).await.status };
    assert_eq!(status().await, StatusCode::OK);

    let off = env.cli_json(&["keys", "deactivate", "--platform", &platform.id, &id]);
    assert_eq!(off["active"], false);
    assert_eq!(status().await, StatusCode::UNAUTHORIZED);
    // Toggling again is harmless.
    env.cli_json(&["keys", "deactivate", "--platform", &platform.id, &id]);

    let on = env.cli_json(&["keys", "activate", "--platform", &platform.id, &id]);
    assert_eq!(
        (on["active"].as_bool(), on["mode"].as_str()),
        (Some(true), Some("test"))
    );
    assert_eq!(status().await, StatusCode::OK);

    let renamed = env.cli_json(&[
        "keys",
        "rename",
        "--platform",
        &platform.id,
        &id,
        "--name",
        "Checkout",
    ]);
    assert_eq!(renamed["name"], "Checkout");
    assert_eq!(
        status().await,
        StatusCode::OK,
        "renaming keeps the key working"
    );

    let listed = env.cli_json(&["keys", "list", "--platform", &platform.id]);
    let entry = listed["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["id"] == id.as_str())
        .unwrap()
        .clone();
    assert!(
        entry["lastUsedOn"].as_str().is_some(),
        "use is recorded: {entry}"
    );

    let deleted = env.cli_json(&["keys", "delete", "--platform", &platform.id, &id]);
    assert_eq!(deleted["deleted"], true);
    assert_eq!(status().await, StatusCode::UNAUTHORIZED);
    for action in ["activate", "deactivate", "delete"] {
        let again = env.cli(&["keys", action, "--platform", &platform.id, &id]);
        assert!(
            !again.success && again.stderr.contains("key not found"),
            "{action}: {}",
            again.stderr
        );
    }
    // Default keys can be renamed, deactivated and deleted too.
    let renamed = env.cli_json(&[
        "keys",
        "rename",
        "--platform",
        &platform.id,
        &platform.public_key_id,
        "--name",
        "Storefront",
    ]);
    assert_eq!(renamed["name"], "Storefront");
    assert_eq!(
        api.get("/v1/merchants", &platform.public_key).await.status,
        StatusCode::FORBIDDEN,
        "renamed, the default public key still authenticates (and is still public)"
    );
    env.cli_json(&[
        "keys",
        "delete",
        "--platform",
        &platform.id,
        &platform.public_key_id,
    ]);
    assert_eq!(
        api.get("/v1/merchants", &platform.public_key).await.status,
        StatusCode::UNAUTHORIZED
    );
}

async fn operator_mistakes_are_refused_clearly(env: Env) {
    let platform = env.create_platform("Acme");
    let too_long = "x".repeat(26);
    // Arguments separated by `|`; {p} is the platform, {k} a key of it, {long} 26 characters.
    let cases = [
        (
            "keys|create|--platform|{p}|--name|ab|--type|private|--mode|test",
            "name: must be 3 to 25 characters long",
        ),
        (
            "keys|create|--platform|{p}|--name|{long}|--type|private|--mode|test",
            "name: must be 3 to 25",
        ),
        (
            "keys|create|--platform|pfm_nope|--name|Backend|--type|private|--mode|test",
            "platform not found",
        ),
        (
            "keys|create|--platform|{p}|--name|Backend|--type|private|--mode|test|--user|usr_nope",
            "user not found",
        ),
        (
            "keys|create|--platform|{p}|--name|Backend|--type|secret|--mode|test",
            "invalid value 'secret'",
        ),
        (
            "keys|rename|--platform|{p}|{k}|--name|  x ",
            "name: must be 3 to 25",
        ),
        (
            "platforms|create|--name|B|--owner-email|nope",
            "--owner-email",
        ),
        (
            "keys|list|--platform|acme",
            "--platform: must be an id starting with pfm_",
        ),
    ];
    for (line, message) in cases {
        let line = line
            .replace("{p}", &platform.id)
            .replace("{k}", &platform.private_key_id)
            .replace("{long}", &too_long);
        let args: Vec<&str> = line.split('|').collect();
        let out = env.cli(&args);
        assert!(!out.success, "{args:?} succeeded");
        assert!(out.stderr.contains(message), "{args:?}: {}", out.stderr);
    }
    let listed = env.cli_json(&["keys", "list", "--platform", &platform.id]);
    assert_eq!(
        listed["data"].as_array().unwrap().len(),
        2,
        "refusals wrote nothing"
    );
}

async fn users_and_who_generated_a_key(env: Env) {
    let platform = env.create_platform("Acme");
    let user = env.cli_json(&[
        "users",
        "create",
        "--platform",
        &platform.id,
        "--email",
        "dev@acme.test",
    ]);
    let user_id = user["id"].as_str().unwrap();
    assert!(user_id.starts_with("usr_"));
    assert_eq!(user["email"], "dev@acme.test");
    let duplicate = env.cli(&[
        "users",
        "create",
        "--platform",
        &platform.id,
        "--email",
        "dev@acme.test",
    ]);
    assert!(
        !duplicate.success && duplicate.stderr.contains("already has a user"),
        "{}",
        duplicate.stderr
    );

    let key = env.cli_json(&[
        "keys",
        "create",
        "--platform",
        &platform.id,
        "--name",
        "Dev key",
        "--type",
        "private",
        "--mode",
        "test",
        "--user",
        user_id,
    ]);
    assert_eq!(key["createdBy"], user_id);
    let default_user = env.cli_json(&[
        "keys",
        "create",
        "--platform",
        &platform.id,
        "--name",
        "Ops key",
        "--type",
        "private",
        "--mode",
        "test",
    ]);
    assert_eq!(
        default_user["createdBy"],
        platform.owner_id.as_str(),
        "the owner by default"
    );

    let users = env.cli_json(&["users", "list", "--platform", &platform.id]);
    let emails: Vec<_> = users["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u["email"].as_str().unwrap())
        .collect();
    assert_eq!(emails, ["owner@example.com", "dev@acme.test"]);

    let owner_delete = env.cli(&[
        "users",
        "delete",
        "--platform",
        &platform.id,
        &platform.owner_id,
    ]);
    assert!(!owner_delete.success && owner_delete.stderr.contains("owner cannot be deleted"));
    env.cli_json(&["users", "delete", "--platform", &platform.id, user_id]);
    assert_eq!(
        env.cli_json(&["users", "list", "--platform", &platform.id])["data"]
            .as_array()
            .unwrap()
            .len(),
        1
    );

    // The key outlives the user who generated it and still names them.
    let server = env.serve();
    let reply = Api::new(&server)
        .get("/v1/merchants", key["value"].as_str().unwrap())
        .await;
    assert_eq!(reply.status, StatusCode::OK);
    let listed = env.cli_json(&["keys", "list", "--platform", &platform.id]);
    assert!(
        listed["data"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["createdBy"] == user_id)
    );
}

on_both_backends!(
    platform_create_prints_owner_and_default_keys_once,
    generated_keys_follow_the_prefix_table,
    key_states_of_spec_3_1_as_seen_by_the_api,
    operator_mistakes_are_refused_clearly,
    users_and_who_generated_a_key,
);
