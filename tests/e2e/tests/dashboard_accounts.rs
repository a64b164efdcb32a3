//! The dashboard's people from outside: every change to keys, subscriptions and users lands in
//! the audit log (rows read from the database), and a forgotten password is reset by a link
//! read from a real SMTP server (aiosmtpd).
#![expect(
    clippy::unwrap_used,
    reason = "test code: a panic is the failure report"
)]

use std::time::Duration;

use holdfast_e2e::dashboard::{
    ADMIN_PASSWORD, Pages, VIEWER_PASSWORD, assert_page_headers, audit_rows, client, link_in,
    owner_and_viewer, sign_in,
};
use holdfast_e2e::{Api, Env, SmtpServer, on_both_backends};
use reqwest::StatusCode;
use serde_json::Value;

const WAIT: Duration = Duration::from_secs(20);

/// Where people reach Holdfast, as the reset test's server is told (`HOLDFAST_PUBLIC_URL`).
const PUBLIC_URL: &str = "https://pay.example.test";

/// The id of the item of a CLI `list` whose `field` is `value`.
fn id_where(list: &Value, field: &str, value: &str) -> String {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|item| item[field] == value)
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// What the audit log holds after `every_change_lands_in_the_audit_log`'s steps, oldest first:
/// who, door, action, target, address, mode.
#[rustfmt::skip]
const EXPECTED: [[&str; 6]; 14] = [
    ["operator", "cli", "user.created", "owner", "-", "-"],
    ["operator", "cli", "key.generated", "private key", "-", "test"],
    ["operator", "cli", "key.generated", "public key", "-", "test"],
    ["operator", "cli", "user.invited", "owner", "-", "-"],
    ["operator", "cli", "user.password_set", "owner", "-", "-"],
    ["operator", "cli", "user.created", "viewer", "-", "-"],
    ["operator", "cli", "user.password_set", "viewer", "-", "-"],
    ["private key", "api", "webhook.created", "hook", "127.0.0.1", "test"],
    ["owner", "dashboard", "user.signed_in", "owner", "127.0.0.1", "-"],
    ["owner", "dashboard", "webhook.deactivated", "hook", "127.0.0.1", "test"],
    ["owner", "dashboard", "webhook.secret_revealed", "hook", "127.0.0.1", "test"],
    ["owner", "dashboard", "key.generated", "audited key", "127.0.0.1", "test"],
    ["operator", "cli", "webhook.activated", "hook", "-", "test"],
    ["viewer", "dashboard", "user.signed_in", "viewer", "127.0.0.1", "-"],
];

/// Every change to keys, subscriptions and users, through each door, is recorded with who made
/// it, from where, in which mode; the Audit Log page lists it for a viewer too.
async fn every_change_lands_in_the_audit_log(env: Env) {
    let platform = owner_and_viewer(&env);
    let server = env.serve();
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let body = r#"{"endpointUrl": "https://example.com/hooks", "events": ["merchant.created"]}"#;
    let made = Api::new(&server)
        .post("/v1/webhooks", &platform.private_key, body)
        .await;
    assert_eq!(made.status, StatusCode::CREATED, "{}", made.text);
    let hook = made.body["id"].as_str().unwrap().to_owned();
    let admin = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let token = pages.token(&admin).await;
    let hooks = "/dashboard/settings/webhooks";
    for (path, status) in [
        (format!("{hooks}/{hook}/disable"), StatusCode::SEE_OTHER),
        (format!("{hooks}/{hook}/secret"), StatusCode::OK),
    ] {
        let done = pages
            .send("POST", &path, Some(&admin), &[("csrf", &token)])
            .await;
        assert_eq!(done.status(), status, "{path}");
    }
    let form = [("csrf", &*token), ("name", "Audited"), ("type", "public")];
    let generated = pages
        .send("POST", "/dashboard/keys", Some(&admin), &form)
        .await;
    // Post/redirect/get: the value is shown by the page the redirect leads to.
    assert_eq!(generated.status(), StatusCode::SEE_OTHER);
    env.cli_json(&["webhooks", "enable", "--platform", &platform.id, &hook]);
    let viewer = sign_in(&server, "viewer@example.com", VIEWER_PASSWORD).await;

    let users = env.cli_json(&["users", "list", "--platform", &platform.id]);
    let viewer_id = id_where(&users, "email", "viewer@example.com");
    let keys = env.cli_json(&["keys", "list", "--platform", &platform.id]);
    let audited = id_where(&keys, "name", "Audited");
    let names = [
        (platform.owner_id.as_str(), "owner"),
        (viewer_id.as_str(), "viewer"),
        (platform.private_key_id.as_str(), "private key"),
        (platform.public_key_id.as_str(), "public key"),
        (audited.as_str(), "audited key"),
        (hook.as_str(), "hook"),
    ];
    assert_eq!(
        audit_rows(&env, &names).await,
        EXPECTED.map(|row| row.map(str::to_owned))
    );

    let page = pages
        .send("GET", "/dashboard/audit", Some(&viewer), &[])
        .await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_page_headers(page.headers(), "/dashboard/audit");
    let html = page.text().await.unwrap();
    for shown in [
        "Revealed signing secret",
        "Set webhook subscription inactive",
        "owner@example.com",
        "API key “Default Private Key”",
        "Command line",
        "127.0.0.1",
        &audited,
    ] {
        assert!(html.contains(shown), "{shown}: {html}");
    }
}

/// The reset page's answer for each address: one with an account, one without (the two must
/// match), and a malformed one (refused without being repeated).
async fn ask_for_resets(pages: &Pages<'_>) {
    let form = pages.send("GET", "/dashboard/reset", None, &[]).await;
    assert_eq!(form.status(), StatusCode::OK);
    assert_page_headers(form.headers(), "/dashboard/reset");
    let mut answers = Vec::new();
    for email in ["owner@example.com", "nobody@example.com"] {
        let asked = pages
            .send("POST", "/dashboard/reset", None, &[("email", email)])
            .await;
        assert_eq!(asked.status(), StatusCode::OK, "{email}");
        answers.push(asked.text().await.unwrap());
    }
    assert_eq!(answers[0], answers[1], "no account is told from an account");
    assert!(answers[0].contains("a link to choose a new password is on its way"));
    let typed = "<b>not an email";
    let bad = pages
        .send("POST", "/dashboard/reset", None, &[("email", typed)])
        .await;
    assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
    // maud escapes `<`: look for the words themselves, escaped or not.
    assert!(
        !bad.text().await.unwrap().contains("not an email"),
        "never echoed"
    );
}

/// Waits until `n` emails are sent, then checks the outbox kept none of their bodies.
async fn assert_sent_bodies_are_erased(env: &Env, n: usize) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let kept = env
            .query_text("SELECT body FROM emails WHERE sent_on IS NOT NULL")
            .await;
        if kept.len() == n {
            assert!(
                kept.iter().all(|r| r[0].as_deref() == Some("")),
                "a sent email keeps no link: {kept:?}"
            );
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{kept:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// `users invite` with an SMTP server set prints the link and emails the same one.
async fn invite_by_email(env: &Env, platform: &str, smtp: &SmtpServer) {
    let made = env.cli_json(&[
        "users",
        "create",
        "--platform",
        platform,
        "--email",
        "new@example.com",
    ]);
    let printed = env.cli_json(&[
        "users",
        "invite",
        "--platform",
        platform,
        made["id"].as_str().unwrap(),
        "--smtp-url",
        &smtp.url(),
    ]);
    assert_eq!(printed["emailed"], true);
    let mails = smtp.wait_for(2, WAIT).await;
    let invitation = mails
        .iter()
        .find(|m| m.to == "new@example.com")
        .expect("the invitation is emailed");
    assert_eq!(invitation.subject, "Your Holdfast dashboard invitation");
    assert_eq!(link_in(invitation), printed["link"].as_str().unwrap());
}

/// A forgotten password: the reset page answers the same for an address with no account, an
/// email reaches a real SMTP server with a link that sets a new password once, the old password
/// stops working, the outbox keeps no link once it is sent, and the audit log has it all. An
/// invitation from the CLI with SMTP configured is emailed the same way.
async fn a_forgotten_password_is_reset_by_an_emailed_link(env: Env) {
    let platform = owner_and_viewer(&env);
    let smtp = SmtpServer::start();
    let smtp_url = smtp.url();
    let server = env.serve_with(&[
        ("HOLDFAST_BOOTSTRAP_DEMO", "false"),
        ("HOLDFAST_WORKER_POLL_MS", "20"),
        ("HOLDFAST_SMTP_URL", &smtp_url),
        ("HOLDFAST_PUBLIC_URL", PUBLIC_URL),
    ]);
    let pages = Pages {
        server: &server,
        http: client(),
    };
    ask_for_resets(&pages).await;
    let mails = smtp.wait_for(1, WAIT).await;
    assert_eq!(mails.len(), 1, "one account, one email: {mails:?}");
    assert_eq!(mails[0].to, "owner@example.com");
    assert_eq!(mails[0].subject, "Reset your Holdfast dashboard password");
    let link = link_in(&mails[0]);
    let path = link
        .strip_prefix(PUBLIC_URL)
        .expect("links start at the public URL");
    let opened = client().get(server.url(path)).send().await.unwrap();
    assert_eq!(opened.status(), StatusCode::OK, "{link}");
    let new_password = "a brand new password";
    let token = link.split("token=").nth(1).unwrap();
    let form = [
        ("token", token),
        ("password", new_password),
        ("confirm", new_password),
    ];
    let set = pages.send("POST", "/dashboard/welcome", None, &form).await;
    assert_eq!(set.status(), StatusCode::SEE_OTHER);
    let again = pages.send("POST", "/dashboard/welcome", None, &form).await;
    assert_eq!(again.status(), StatusCode::BAD_REQUEST, "a link works once");
    sign_in(&server, "owner@example.com", new_password).await;
    let old = client()
        .post(server.url("/dashboard/sign-in"))
        .form(&[("email", "owner@example.com"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(old.status(), StatusCode::UNAUTHORIZED, "the old password");

    invite_by_email(&env, &platform.id, &smtp).await;
    assert_sent_bodies_are_erased(&env, 2).await;
    let owner = [(platform.owner_id.as_str(), "owner")];
    let actions: Vec<String> = audit_rows(&env, &owner)
        .await
        .into_iter()
        .filter(|[.., target, _, _]| target == "owner")
        .map(|[_, door, action, ..]| format!("{door} {action}"))
        .collect();
    assert_eq!(
        actions[actions.len() - 3..],
        [
            "dashboard user.reset_requested",
            "dashboard user.password_set",
            "dashboard user.signed_in"
        ]
    );
}

/// One email with accounts on two platforms: sign-in opens the older; the switch lists the
/// other, refuses the first account's password for it, and with the second account's own
/// password moves the browser to it with a new session, ending the old one.
async fn one_email_switches_between_its_platforms(env: Env) {
    let acme = owner_and_viewer(&env);
    let beta = env.create_platform("Beta");
    let beta_password = "beta horse battery staple";
    holdfast_e2e::dashboard::set_password(&env, &beta.id, &beta.owner_id, beta_password);
    // The email's two accounts share a salt, so one argon2 run checks a password against
    // both: a wrong one takes the same time for an email with one account or with several.
    let hashes = env
        .query_text("SELECT password_hash FROM users WHERE email = 'owner@example.com'")
        .await;
    let parts: Vec<Vec<String>> = hashes
        .iter()
        .map(|row| {
            row[0]
                .clone()
                .unwrap()
                .split('$')
                .map(String::from)
                .collect()
        })
        .collect();
    assert_eq!(parts.len(), 2, "{hashes:?}");
    assert_eq!(parts[0][1], "argon2id");
    assert_eq!(parts[0][4], parts[1][4], "one salt");
    assert_ne!(parts[0][5], parts[1][5], "two passwords");
    let server = env.serve();
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let on_acme = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let keys = pages
        .send("GET", "/dashboard/keys", Some(&on_acme), &[])
        .await;
    assert!(
        keys.text().await.unwrap().contains(&acme.private_key_id),
        "the older account"
    );
    let page = pages
        .send("GET", "/dashboard/platforms", Some(&on_acme), &[])
        .await;
    assert_eq!(page.status(), StatusCode::OK);
    assert_page_headers(page.headers(), "/dashboard/platforms");
    let html = page.text().await.unwrap();
    assert!(html.contains("Beta") && html.contains(&beta.id), "{html}");
    let token = pages.token(&on_acme).await;
    let switch = |password| {
        [
            ("csrf", token.clone()),
            ("platform", beta.id.clone()),
            ("password", String::from(password)),
        ]
    };
    let form = switch(ADMIN_PASSWORD);
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let wrong = pages
        .send("POST", "/dashboard/platforms", Some(&on_acme), &form)
        .await;
    assert_eq!(
        wrong.status(),
        StatusCode::UNAUTHORIZED,
        "Acme's password for Beta"
    );
    let form = switch(beta_password);
    let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let moved = pages
        .send("POST", "/dashboard/platforms", Some(&on_acme), &form)
        .await;
    assert_eq!(moved.status(), StatusCode::SEE_OTHER);
    let cookie = moved.headers()[reqwest::header::SET_COOKIE]
        .to_str()
        .unwrap();
    let on_beta = cookie.split(';').next().unwrap().to_owned();
    let keys = pages
        .send("GET", "/dashboard/keys", Some(&on_beta), &[])
        .await;
    let html = keys.text().await.unwrap();
    assert!(html.contains(&beta.private_key_id) && !html.contains(&acme.private_key_id));
    let old = pages
        .send("GET", "/dashboard/keys", Some(&on_acme), &[])
        .await;
    assert_eq!(old.status(), StatusCode::SEE_OTHER, "the old session ended");
}

/// The statuses of up to `attempts` tries, ending with the first 429, which must say when to
/// come back (`Retry-After`, and in words on the page).
async fn until_locked_out(
    attempts: usize,
    attempt: impl AsyncFn() -> reqwest::Response,
) -> Vec<StatusCode> {
    let mut statuses = Vec::new();
    for _ in 0..attempts {
        let reply = attempt().await;
        statuses.push(reply.status());
        if reply.status() == StatusCode::TOO_MANY_REQUESTS {
            assert!(
                reply.headers().contains_key(reqwest::header::RETRY_AFTER),
                "a lockout says when to come back"
            );
            assert!(reply.text().await.unwrap().contains("Try again in"));
            break;
        }
    }
    statuses
}

/// A switch is a sign-in to another account, under the same budget: wrong passwords spend
/// the address's failed-authentication budget, the one that spends it is answered 429 with
/// `Retry-After`, and from then on even the right password is refused.
async fn the_platform_switch_shares_the_sign_in_lockout(env: Env) {
    owner_and_viewer(&env);
    let beta = env.create_platform("Beta");
    let beta_password = "beta horse battery staple";
    holdfast_e2e::dashboard::set_password(&env, &beta.id, &beta.owner_id, beta_password);
    let server = env.serve_with(&[("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "3")]);
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let on_acme = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let token = pages.token(&on_acme).await;
    let attempt = async |password: &str| {
        let form = [
            ("csrf", token.as_str()),
            ("platform", beta.id.as_str()),
            ("password", password),
        ];
        pages
            .send("POST", "/dashboard/platforms", Some(&on_acme), &form)
            .await
    };
    let statuses = until_locked_out(4, async || attempt("not the password at all").await).await;
    assert_eq!(
        statuses.last(),
        Some(&StatusCode::TOO_MANY_REQUESTS),
        "wrong passwords lock the switch out: {statuses:?}"
    );
    assert!(
        statuses[..statuses.len() - 1]
            .iter()
            .all(|s| *s == StatusCode::UNAUTHORIZED)
    );
    let right = attempt(beta_password).await;
    assert_eq!(
        right.status(),
        StatusCode::TOO_MANY_REQUESTS,
        "inside the lockout a right password is no use"
    );
}

/// A set-password link is a credential: guessing links spends the address's
/// failed-authentication budget, the guess that spends it is answered 429 with `Retry-After`,
/// and so is every guess after it.
async fn guessed_links_lock_the_address_out(env: Env) {
    let server = env.serve_with(&[("HOLDFAST_RATE_LIMIT_FAILED_AUTH_PER_MIN", "3")]);
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let guess = async || {
        let fields = [
            ("token", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"),
            ("password", "a long enough password"),
            ("confirm", "a long enough password"),
        ];
        pages
            .send("POST", "/dashboard/welcome", None, &fields)
            .await
    };
    let statuses = until_locked_out(5, guess).await;
    assert_eq!(
        statuses,
        [
            StatusCode::BAD_REQUEST,
            StatusCode::BAD_REQUEST,
            StatusCode::BAD_REQUEST,
            StatusCode::TOO_MANY_REQUESTS
        ],
        "a budget of three failures a minute: the fourth is refused"
    );
    let after = guess().await;
    assert_eq!(after.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(after.headers().contains_key(reqwest::header::RETRY_AFTER));
}

/// Five wrong passwords lock an account however they are sent: twenty sent at once are
/// counted before their passwords are checked, so at most five are checked (401) and the rest
/// are refused (429) — and then even the right password is.
async fn wrong_passwords_sent_at_once_lock_the_account_at_five(env: Env) {
    let platform = env.create_platform("Acme");
    holdfast_e2e::dashboard::set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let server = env.serve();
    let mut guesses = tokio::task::JoinSet::new();
    for n in 0..20 {
        let url = server.url("/dashboard/sign-in");
        guesses.spawn(async move {
            let password = format!("wrong guess number {n}");
            client()
                .post(url)
                .form(&[("email", "owner@example.com"), ("password", &password)])
                .send()
                .await
                .unwrap()
                .status()
        });
    }
    let statuses = guesses.join_all().await;
    let checked = statuses
        .iter()
        .filter(|s| **s == StatusCode::UNAUTHORIZED)
        .count();
    let refused = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    assert_eq!((checked, refused), (5, 15), "{statuses:?}");
    let right = client()
        .post(server.url("/dashboard/sign-in"))
        .form(&[("email", "owner@example.com"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .unwrap();
    assert_eq!(right.status(), StatusCode::TOO_MANY_REQUESTS);
}

/// The session cookie travels only over TLS when people reach Holdfast at an `https` public
/// URL, or when the request came over TLS by the proxy's word; otherwise (a plain-http
/// development server) the browser could not send it back, and it goes without `Secure`.
async fn the_session_cookie_is_secure_behind_tls(env: Env) {
    let platform = env.create_platform("Acme");
    holdfast_e2e::dashboard::set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let cookie_from = async |server: &holdfast_e2e::Server, proto: Option<(&str, &str)>| {
        let mut request = client()
            .post(server.url("/dashboard/sign-in"))
            .form(&[("email", "owner@example.com"), ("password", ADMIN_PASSWORD)]);
        if let Some(header) = proto {
            request = request.header(header.0, header.1);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), StatusCode::SEE_OTHER);
        response.headers()[reqwest::header::SET_COOKIE]
            .to_str()
            .unwrap()
            .to_owned()
    };
    let plain = env.serve();
    let behind_tls = env.serve_with(&[("HOLDFAST_PUBLIC_URL", PUBLIC_URL)]);
    // (server, the proxy's word on the scheme, Secure)
    let cases = [
        (&plain, None, false),
        (&plain, Some(("x-forwarded-proto", "http")), false),
        (&plain, Some(("x-forwarded-proto", "https")), true),
        (
            &plain,
            Some(("forwarded", "for=203.0.113.9;proto=https")),
            true,
        ),
        (&plain, Some(("forwarded", "proto=http")), false),
        (&behind_tls, None, true),
        (&behind_tls, Some(("x-forwarded-proto", "http")), true),
    ];
    for (server, proto, secure) in cases {
        let cookie = cookie_from(server, proto).await;
        assert_eq!(
            cookie.split(';').any(|flag| flag.trim() == "Secure"),
            secure,
            "{proto:?}: {cookie}"
        );
    }
}

/// Spec 2.1: a key's name is 3 to 25 characters, counted as a reader counts them. The form
/// sets no `maxlength` (a browser counts UTF-16 units there, and would refuse 13 emoji); the
/// server counts, and refuses the 26th character.
async fn key_names_are_counted_as_people_read_them(env: Env) {
    let platform = env.create_platform("Acme");
    holdfast_e2e::dashboard::set_password(&env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    let server = env.serve();
    let pages = Pages {
        server: &server,
        http: client(),
    };
    let admin = sign_in(&server, "owner@example.com", ADMIN_PASSWORD).await;
    let page = pages
        .send("GET", "/dashboard/keys", Some(&admin), &[])
        .await;
    assert!(!page.text().await.unwrap().contains("maxlength"));
    let token = pages.token(&admin).await;
    let emoji = "\u{1f511}".repeat(13);
    for (name, status) in [
        (emoji.as_str(), StatusCode::SEE_OTHER),
        (&"k".repeat(25), StatusCode::SEE_OTHER),
        (&"k".repeat(26), StatusCode::BAD_REQUEST),
        ("ab", StatusCode::BAD_REQUEST),
    ] {
        let form = [
            ("csrf", token.as_str()),
            ("name", name),
            ("type", "private"),
        ];
        let sent = pages
            .send("POST", "/dashboard/keys", Some(&admin), &form)
            .await;
        assert_eq!(sent.status(), status, "{} characters", name.chars().count());
    }
    let keys = env.cli_json(&["keys", "list", "--platform", &platform.id]);
    let names: Vec<&str> = keys["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["name"].as_str())
        .collect();
    assert!(names.contains(&emoji.as_str()), "{names:?}");
    assert!(!names.iter().any(|n| n.chars().count() > 25), "{names:?}");
}

on_both_backends!(
    the_session_cookie_is_secure_behind_tls,
    key_names_are_counted_as_people_read_them,
    every_change_lands_in_the_audit_log,
    wrong_passwords_sent_at_once_lock_the_account_at_five,
    a_forgotten_password_is_reset_by_an_emailed_link,
    one_email_switches_between_its_platforms,
    the_platform_switch_shares_the_sign_in_lockout,
    guessed_links_lock_the_address_out,
);
