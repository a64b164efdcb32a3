//! What reaches a receiver, and what comes back from it.

mod support;

use holdfast_domain::ports::{PostResult, WebhookSender};
use holdfast_outbound_http::{SenderConfig, sign};
use support::{Reply, loopback_sender, post_to, receiver, sender_with};

fn answered(status: u16, body: &str) -> PostResult {
    PostResult::Answered {
        status,
        body: body.to_owned(),
    }
}

#[tokio::test]
async fn answers_come_back_with_status_and_body() {
    for (status, body) in [
        (200, "ok"),
        (204, ""),
        (404, "no such hook"),
        (503, "try later"),
    ] {
        let server = receiver(Reply::new(status, body)).await;
        let result = loopback_sender().post(&post_to(server.url("/hooks"))).await;
        assert_eq!(result, answered(status, body));
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn the_request_is_signed_and_carries_its_headers() {
    let server = receiver(Reply::new(200, "ok")).await;
    let mut post = post_to(server.url("/hooks/in?x=1"));
    post.custom_header = Some(("X-Gateway-Token".to_owned(), "abc 123".to_owned()));
    assert_eq!(loopback_sender().post(&post).await, answered(200, "ok"));

    let seen = server.requests();
    let [request] = seen.as_slice() else {
        panic!("{seen:?}")
    };
    let header = |name: &str| {
        request
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    assert_eq!(request.path, "/hooks/in");
    assert_eq!(request.body, post.body);
    assert_eq!(header("webhook-id").as_deref(), Some("msg_2Q4e7Kc9"));
    assert_eq!(header("webhook-timestamp").as_deref(), Some("1700000123"));
    let expected = sign(
        &post.secrets[0],
        &post.message_id,
        post.timestamp,
        &post.body,
    )
    .unwrap();
    assert_eq!(header("webhook-signature"), Some(expected));
    assert_eq!(header("content-type").as_deref(), Some("application/json"));
    assert_eq!(header("x-gateway-token").as_deref(), Some("abc 123"));
    assert!(
        header("user-agent")
            .unwrap()
            .starts_with("Holdfast-Webhooks/")
    );
}

/// During a secret rotation's overlap: one `v1,` signature per secret, space-separated, the
/// current secret's first (Standard Webhooks allows several).
#[tokio::test]
async fn each_secret_signs_the_request() {
    let server = receiver(Reply::new(200, "ok")).await;
    let mut post = post_to(server.url("/hooks"));
    post.secrets.push("whsec_b2xkIHNlY3JldA==".to_owned());
    assert_eq!(loopback_sender().post(&post).await, answered(200, "ok"));
    let seen = server.requests();
    let signature = seen[0].headers.get("webhook-signature").unwrap();
    let expected: Vec<String> = post
        .secrets
        .iter()
        .map(|s| sign(s, &post.message_id, post.timestamp, &post.body).unwrap())
        .collect();
    assert_eq!(signature.to_str().unwrap(), expected.join(" "));
}

#[tokio::test]
async fn redirects_are_returned_not_followed() {
    let mut reply = Reply::new(302, "");
    reply.headers.push(("location", "/elsewhere".to_owned()));
    let server = receiver(reply).await;
    let result = loopback_sender().post(&post_to(server.url("/hooks"))).await;
    assert_eq!(result, answered(302, ""));
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(paths, ["/hooks"]);
}

#[tokio::test]
async fn a_large_body_is_cut_at_the_cap() {
    let server = receiver(Reply::new(200, "x".repeat(100_000))).await;
    let sender = sender_with(SenderConfig {
        allow_networks: vec!["127.0.0.0/8".parse().unwrap()],
        max_response_bytes: 1000,
        ..SenderConfig::default()
    });
    assert_eq!(
        sender.post(&post_to(server.url("/"))).await,
        answered(200, &"x".repeat(1000))
    );
}

#[tokio::test]
async fn the_default_cap_is_64_kib() {
    let server = receiver(Reply::new(500, "y".repeat(70_000))).await;
    let PostResult::Answered { status, body } =
        loopback_sender().post(&post_to(server.url("/"))).await
    else {
        panic!("no answer")
    };
    assert_eq!((status, body.len()), (500, 64 * 1024));
}

#[tokio::test]
async fn connections_are_reused() {
    let server = receiver(Reply::new(200, "ok")).await;
    let sender = loopback_sender();
    for _ in 0..2 {
        assert_eq!(
            sender.post(&post_to(server.url("/"))).await,
            answered(200, "ok")
        );
    }
    assert_eq!((server.requests().len(), server.connections()), (2, 1));
}
