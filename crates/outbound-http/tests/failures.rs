//! Requests that get no answer: each kind of failure, and the SSRF guard.

mod support;

use std::time::{Duration, Instant};

use holdfast_domain::ports::{PostResult, SendFailure, WebhookSender};
use holdfast_outbound_http::SenderConfig;
use support::{Reply, loopback_sender, post_to, receiver, sender_with};

fn failure(result: PostResult) -> SendFailure {
    match result {
        PostResult::Failed(failure) => failure,
        answered @ PostResult::Answered { .. } => panic!("expected a failure, got {answered:?}"),
    }
}

#[tokio::test]
async fn a_slow_receiver_times_out() {
    let mut reply = Reply::new(200, "late");
    reply.delay = Duration::from_secs(3);
    let server = receiver(reply).await;
    let mut post = post_to(server.url("/"));
    post.timeout = Duration::from_millis(200);
    let started = Instant::now();
    assert_eq!(
        failure(loopback_sender().post(&post).await),
        SendFailure::Timeout
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn nothing_listening_is_a_connect_failure() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let result = loopback_sender()
        .post(&post_to(format!("http://127.0.0.1:{port}/")))
        .await;
    assert!(matches!(failure(result), SendFailure::Connect(_)));
}

#[tokio::test]
async fn an_unknown_host_is_a_dns_failure() {
    let result = loopback_sender()
        .post(&post_to("http://nonexistent.invalid/hooks".to_owned()))
        .await;
    let SendFailure::Dns(why) = failure(result) else {
        panic!("expected Dns")
    };
    assert!(why.contains("nonexistent.invalid"), "{why}");
}

#[tokio::test]
async fn tls_to_a_plain_http_receiver_is_a_connect_failure() {
    let server = receiver(Reply::new(200, "ok")).await;
    let result = loopback_sender()
        .post(&post_to(format!("https://{}/", server.addr)))
        .await;
    assert!(matches!(failure(result), SendFailure::Connect(_)));
}

#[tokio::test]
async fn loopback_is_refused_without_the_allow_list() {
    let server = receiver(Reply::new(200, "ok")).await;
    let sender = sender_with(SenderConfig::default());
    let result = sender.post(&post_to(server.url("/"))).await;
    assert_eq!(
        failure(result),
        SendFailure::Refused("127.0.0.1 is not a public address".to_owned())
    );
    let by_name = sender
        .post(&post_to(format!(
            "http://localhost:{}/",
            server.addr.port()
        )))
        .await;
    let SendFailure::Refused(why) = failure(by_name) else {
        panic!("expected Refused")
    };
    assert_eq!(
        why, "localhost resolves to an address that is not public",
        "the resolved address is not disclosed"
    );
    let mapped = sender
        .post(&post_to(format!(
            "http://[::ffff:127.0.0.1]:{}/",
            server.addr.port()
        )))
        .await;
    assert!(matches!(failure(mapped), SendFailure::Refused(_)));
    assert_eq!((server.connections(), server.requests().len()), (0, 0));
}

#[tokio::test]
async fn a_private_allow_list_does_not_open_other_networks() {
    let server = receiver(Reply::new(200, "ok")).await;
    let sender = sender_with(SenderConfig {
        allow_networks: vec!["10.0.0.0/8".parse().unwrap()],
        ..SenderConfig::default()
    });
    assert!(matches!(
        failure(sender.post(&post_to(server.url("/"))).await),
        SendFailure::Refused(_)
    ));
    assert_eq!(server.connections(), 0);
}
