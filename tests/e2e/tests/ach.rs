//! The live rail from outside (docs/money.md, "The live rail"): a live merchant boarded with a
//! US account, paid by a live sale through a stand-in Adyen; its payouts written by
//! `holdfast ledger pay-out` into one NACHA file in the outbox, which the `carta-ach` parser reads
//! and whose controls agree with its entries; a bank's return file in the inbox fails its payout
//! with the code (read once, however often it is dropped in), a file that is not one set aside;
//! the other payout paid once its file has settled; the books verify.
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]
#![expect(
    clippy::too_many_lines,
    reason = "end-to-end scenarios read top to bottom"
)]

use std::path::{Path, PathBuf};

use holdfast_e2e::ach::{parse, return_file};
use holdfast_e2e::fake_adyen::FakeAdyen;
use holdfast_e2e::{Api, Env, boarded_merchant, contains, on_both_backends};
use reqwest::StatusCode;
use serde_json::{Value, json};

/// The rail's settings, as flags of the operator command.
fn rail_flags(outbox: &Path, inbox: &Path) -> Vec<String> {
    [
        ("--ach-outbox", outbox.to_str().unwrap()),
        ("--ach-inbox", inbox.to_str().unwrap()),
        ("--ach-odfi", "091000019"),
        ("--ach-odfi-name", "Wells Fargo"),
        ("--ach-company-name", "Holdfast"),
        ("--ach-company-id", "1234567890"),
    ]
    .into_iter()
    .flat_map(|(flag, value)| [flag.to_owned(), value.to_owned()])
    .collect()
}

/// One run of the rails by the operator command: what it reports. Nothing it prints, its
/// logs included, holds the account number.
fn pay_out(env: &Env, flags: &[String]) -> Value {
    let mut args = vec!["--json", "ledger", "pay-out"];
    args.extend(flags.iter().map(String::as_str));
    let out = env.cli(&args);
    assert!(out.success, "{}", out.stderr);
    for printed in [&out.stdout, &out.stderr] {
        assert!(!printed.contains("000123456789"), "{printed}");
    }
    serde_json::from_str(&out.stdout).unwrap()
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

async fn payout(api: &Api, key: &str, id: &str) -> Value {
    let got = api.get(&format!("/v1/payouts/{id}"), key).await;
    assert_eq!(got.status, StatusCode::OK, "{}", got.text);
    got.body
}

/// The fields of `record` as the parser gave them, as a number.
fn number(record: &Value, field: &str) -> u64 {
    record[field].as_str().unwrap().trim().parse().unwrap()
}

/// The file's records against each other, read by the independent parser: 94 characters each,
/// ten to a block; one batch; each control's count, total and entry hash those of the entries.
/// The entries' (trace, amount) pairs.
fn checked_file(text: &str) -> Vec<(String, u64)> {
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().all(|l| l.len() == 94), "94-character records");
    assert_eq!(lines.len() % 10, 0, "blocks of ten");
    let file = parse(text);
    let batches = file["batches"].as_array().unwrap();
    assert_eq!(batches.len(), 1);
    let entries: Vec<&Value> = batches[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| &e["entry_detail"])
        .collect();
    let total: u64 = entries.iter().map(|e| number(e, "amount")).sum();
    let hash: u64 = entries
        .iter()
        .map(|e| number(e, "recv_dfi_id"))
        .sum::<u64>()
        % 10_000_000_000;
    for control in [&batches[0]["batch_control"], &file["file_control"]] {
        assert_eq!(number(control, "entadd_count"), entries.len() as u64);
        assert_eq!(number(control, "entry_hash"), hash);
        assert_eq!(number(control, "credit_amount"), total);
        assert_eq!(number(control, "debit_amount"), 0);
    }
    assert_eq!(number(&file["file_control"], "batch_count"), 1);
    assert_eq!(
        number(&file["file_control"], "block_count"),
        lines.len() as u64 / 10
    );
    for entry in &entries {
        assert_eq!(entry["transaction_code"], "22", "a checking credit");
        assert_eq!(
            format!(
                "{}{}",
                entry["recv_dfi_id"].as_str().unwrap(),
                entry["check_digit"].as_str().unwrap()
            ),
            "021000021",
            "the boarding form's routing number"
        );
        assert_eq!(
            entry["dfi_acnt_num"].as_str().unwrap().trim(),
            "000123456789",
            "the boarding form's account"
        );
    }
    entries
        .iter()
        .map(|e| {
            (
                e["trace_num"].as_str().unwrap().to_owned(),
                number(e, "amount"),
            )
        })
        .collect()
}

async fn a_live_payout_goes_to_the_bank_in_a_nacha_file_and_comes_back_by_its_return(env: Env) {
    let dirs = tempfile::tempdir().unwrap();
    let (outbox, inbox) = (dirs.path().join("outbox"), dirs.path().join("inbox"));
    std::fs::create_dir(&outbox).unwrap();
    std::fs::create_dir(&inbox).unwrap();
    let flags = rail_flags(&outbox, &inbox);
    let platform = env.create_platform("Acme");
    let (_, live) = env.create_key(&platform.id, "private", "live");
    let fake = FakeAdyen::start().await;
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_ADYEN_ALLOW_LOOPBACK", "true"),
        ("HOLDFAST_SETTLE_EVERY_MS", "0"),
        ("HOLDFAST_PAYOUT_EVERY_MS", "0"),
    ]);
    let api = Api::new(&server);
    let connection = api
        .post(
            "/v1/processor-connections",
            &live,
            &fake.connection_body("Adyen"),
        )
        .await;
    assert_eq!(
        connection.status,
        StatusCode::CREATED,
        "{}",
        connection.text
    );
    let plan = json!({"name": "Adyen", "fee": {"basisPoints": 0, "fixed": 0},
                      "defaultConnectionId": connection.body["id"], "default": true,
                      "settlementDelayDays": 0});
    let plan = api.post("/v1/plans", &live, &plan.to_string()).await;
    assert_eq!(plan.status, StatusCode::CREATED, "{}", plan.text);
    let shop = boarded_merchant(&env, &api, &live, &platform.id).await;
    let sale = json!({"merchantId": shop, "type": "sale", "amount": 3500,
                      "payment": {"number": "4111111111111111", "cvv": "737",
                                  "expiration": "0330", "name": "Jane Doe"}});
    let sale = api.post("/v1/transactions", &live, &sale.to_string()).await;
    assert_eq!(sale.status, StatusCode::CREATED, "{}", sale.text);
    assert_eq!(env.cli_json(&["ledger", "settle"])["transactions"], 1);
    let mut payouts = Vec::new();
    for amount in [1000, 2500] {
        let made = api
            .post(
                "/v1/payouts",
                &live,
                &json!({"merchantId": shop, "amount": amount}).to_string(),
            )
            .await;
        assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
        assert_eq!(made.body["traceNumber"], Value::Null);
        payouts.push(made.body["id"].as_str().unwrap().to_owned());
    }

    // One run: one file of both payouts, in transit, each with its entry's trace.
    assert_eq!(
        pay_out(&env, &flags),
        json!({"made": 0, "sent": 2, "paid": 0, "failed": 0})
    );
    let sent = files_in(&outbox);
    assert_eq!(sent.len(), 1, "{sent:?}");
    let name = sent[0].file_name().unwrap().to_str().unwrap().to_owned();
    assert!(
        name.starts_with("achf_") && sent[0].extension().is_some_and(|e| e == "ach"),
        "{name}"
    );
    let entries = checked_file(&std::fs::read_to_string(&sent[0]).unwrap());
    let mut traced = Vec::new();
    for id in &payouts {
        let now = payout(&api, &live, id).await;
        assert_eq!(now["state"], "in_transit", "{now}");
        let trace = now["traceNumber"].as_str().unwrap().to_owned();
        assert!(
            trace.starts_with("09100001"),
            "the ODFI's eight digits: {trace}"
        );
        traced.push((trace, now["amount"].as_u64().unwrap()));
    }
    let mut in_file = entries.clone();
    in_file.sort();
    traced.sort();
    assert_eq!(in_file, traced, "every payout once, with its amount");
    assert_eq!(
        pay_out(&env, &flags),
        json!({"made": 0, "sent": 0, "paid": 0, "failed": 0}),
        "nothing pending: no second file"
    );
    assert_eq!(files_in(&outbox), sent);

    // The bank returns the first payout: failed with the code, its money available again.
    let first = payout(&api, &live, &payouts[0]).await;
    let returned = return_file(first["traceNumber"].as_str().unwrap(), 1000, "R03");
    std::fs::write(inbox.join("returns-1.ach"), &returned).unwrap();
    std::fs::write(inbox.join("not-a-file.ach"), "1 hello\n9 hello\n").unwrap();
    // One still being written (no file control yet) waits for the next run.
    let partial = returned.lines().take(4).collect::<Vec<_>>().join("\n") + "\n";
    std::fs::write(inbox.join("partial.ach"), &partial).unwrap();
    assert_eq!(
        pay_out(&env, &flags),
        json!({"made": 0, "sent": 0, "paid": 0, "failed": 1})
    );
    let failed = payout(&api, &live, &payouts[0]).await;
    assert_eq!(failed["state"], "failed");
    assert_eq!(
        failed["failure"],
        json!({"code": "R03", "message": "No account / unable to locate account"})
    );
    assert!(inbox.join("read/returns-1.ach").is_file());
    assert!(inbox.join("refused/not-a-file.ach").is_file());
    assert_eq!(
        files_in(&inbox),
        [inbox.join("partial.ach")],
        "the partial one waits"
    );
    std::fs::remove_file(inbox.join("partial.ach")).unwrap();
    std::fs::write(inbox.join("returns-1.ach"), &returned).unwrap();
    assert_eq!(
        pay_out(&env, &flags)["failed"],
        0,
        "a return read twice fails nothing twice"
    );
    let balance = api
        .get(&format!("/v1/balances?merchantId={shop}"), &live)
        .await;
    assert_eq!(balance.body["balances"][0]["available"], 1000);
    assert_eq!(balance.body["balances"][0]["inTransit"], 2500);

    // Once its file has settled (its effective day moved back: time travel), the other is paid.
    assert_eq!(pay_out(&env, &flags)["paid"], 0, "not before its day");
    env.execute_sql("UPDATE ach_files SET effective_on = '2000-01-03'")
        .await;
    assert_eq!(
        pay_out(&env, &flags),
        json!({"made": 0, "sent": 0, "paid": 1, "failed": 0})
    );
    assert_eq!(payout(&api, &live, &payouts[1]).await["state"], "paid");
    let balance = api
        .get(&format!("/v1/balances?merchantId={shop}"), &live)
        .await;
    assert_eq!(balance.body["balances"][0]["inTransit"], 0);
    assert_eq!(env.cli_json(&["ledger", "verify"])["problems"], json!([]));
    // PostgreSQL's dump shows a bytea as hex: the account number is looked for in both forms.
    let dump = env.dump().await;
    for held in [&b"000123456789"[..], b"303030313233343536373839"] {
        assert!(
            !contains(&dump, held),
            "the file kept in the database is sealed, as the form's account is"
        );
    }
    drop(server);
}

on_both_backends!(a_live_payout_goes_to_the_bank_in_a_nacha_file_and_comes_back_by_its_return);
