//! What the dashboard's tests share: users with passwords, a signed-in session, the pages as a
//! browser without JavaScript reaches them, and the audit log read from the database.

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, SET_COOKIE};

use crate::{Env, Server};

pub const ADMIN_PASSWORD: &str = "correct horse battery";
pub const VIEWER_PASSWORD: &str = "viewer horse battery";

/// A user of `platform` with a password set by the operator CLI; returns the user's id.
pub fn user_with_password(
    env: &Env,
    platform: &str,
    email: &str,
    role: &str,
    password: &str,
) -> String {
    let user = env.cli_json(&[
        "users",
        "create",
        "--platform",
        platform,
        "--email",
        email,
        "--role",
        role,
    ]);
    let id = user["id"].as_str().unwrap().to_owned();
    set_password(env, platform, &id, password);
    id
}

/// Platform "Acme", its owner (an admin) and a viewer, both with passwords.
pub fn owner_and_viewer(env: &Env) -> crate::PlatformFixture {
    let platform = env.create_platform("Acme");
    set_password(env, &platform.id, &platform.owner_id, ADMIN_PASSWORD);
    user_with_password(
        env,
        &platform.id,
        "viewer@example.com",
        "viewer",
        VIEWER_PASSWORD,
    );
    platform
}

pub fn set_password(env: &Env, platform: &str, user: &str, password: &str) {
    let args = [
        "users",
        "set-password",
        "--platform",
        platform,
        user,
        "--password-stdin",
    ];
    let out = env.cli_with_input(&args, &format!("{password}\n"));
    assert!(out.success, "{}", out.stderr);
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
}

/// Signs in as the platform's owner; the session cookie's `name=value`.
pub async fn sign_in(server: &Server, email: &str, password: &str) -> String {
    let response = client()
        .post(server.url("/dashboard/sign-in"))
        .form(&[("email", email), ("password", password)])
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::SEE_OTHER);
    let cookie = response.headers()[SET_COOKIE].to_str().unwrap().to_owned();
    for flag in ["HttpOnly", "SameSite=Strict", "Path=/dashboard"] {
        assert!(cookie.contains(flag), "{cookie}");
    }
    assert!(
        !cookie.contains("Max-Age"),
        "the server ends sessions: {cookie}"
    );
    cookie.split(';').next().unwrap().to_owned()
}

pub fn assert_page_headers(headers: &HeaderMap, what: &str) {
    let policy = headers["content-security-policy"].to_str().unwrap();
    assert!(
        policy.contains("frame-ancestors 'none'"),
        "{what}: {policy}"
    );
    assert!(policy.contains("script-src 'self'"), "{what}: {policy}");
    assert!(!policy.contains("unsafe-inline"), "{what}: {policy}");
    assert_eq!(headers["cache-control"], "no-store", "{what}");
    assert_eq!(headers["referrer-policy"], "same-origin", "{what}");
    assert_eq!(headers["x-frame-options"], "DENY", "{what}");
}

/// The dashboard's routes, as a browser without JavaScript reaches them: no redirects followed.
#[derive(Debug)]
pub struct Pages<'a> {
    pub server: &'a Server,
    pub http: reqwest::Client,
}

impl Pages<'_> {
    pub async fn send(
        &self,
        method: &str,
        path: &str,
        cookie: Option<&str>,
        form: &[(&str, &str)],
    ) -> reqwest::Response {
        let mut request = self
            .http
            .request(method.parse().unwrap(), self.server.url(path));
        if let Some(cookie) = cookie {
            request = request.header("cookie", cookie);
        }
        if method == "POST" {
            request = request.form(form);
        }
        request.send().await.unwrap()
    }

    /// The form token of the session `cookie` names, as its pages carry it.
    pub async fn token(&self, cookie: &str) -> String {
        let page = self.send("GET", "/dashboard/keys", Some(cookie), &[]).await;
        let html = page.text().await.unwrap();
        let token = html.split(r#"name="csrf" value=""#).nth(1).unwrap();
        token[..token.find('"').unwrap()].to_owned()
    }
}

/// The audit log's rows as the database holds them, oldest first: (who, door, action, target,
/// address, mode), with the ids of `names` replaced by their names.
pub async fn audit_rows(env: &Env, names: &[(&str, &str)]) -> Vec<[String; 6]> {
    let rows = env
        .query_text("SELECT actor, door, action, target, address, mode FROM audit_log ORDER BY id")
        .await;
    let with_name = |raw: &Option<String>| {
        let raw = raw.clone().unwrap_or_else(|| "-".into());
        names
            .iter()
            .find(|(id, _)| *id == raw)
            .map_or(raw, |(_, name)| (*name).to_owned())
    };
    rows.iter()
        .map(|r| std::array::from_fn(|i| with_name(&r[i])))
        .collect()
}

/// The one-time link in an email's body.
pub fn link_in(mail: &crate::Mail) -> String {
    let start = mail.body.find("http").expect("a link");
    mail.body[start..]
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned()
}
