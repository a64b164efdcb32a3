use std::time::{Duration, Instant};

use holdfast_domain::ports::{MailError, Mailer, OutgoingEmail};

use super::SmtpMailer;
use super::fake_server::{Step, normal, start};

fn email() -> OutgoingEmail {
    OutgoingEmail {
        to: "ana@shop.test".to_owned(),
        subject: "Receipt".to_owned(),
        body: "Paid.".to_owned(),
    }
}

async fn send_to(script: fn(&str) -> Step, user_info: &str) -> Result<(), MailError> {
    let addr = start(script).await;
    let url = format!("smtp://{user_info}{addr}");
    let mailer = SmtpMailer::new(&url, "noreply@holdfast.test", Duration::from_secs(5)).unwrap();
    mailer.send("eml_1", &email()).await
}

fn is_permanent(result: &Result<(), MailError>) -> bool {
    matches!(result, Err(MailError::Permanent(_)))
}

fn is_temporary(result: &Result<(), MailError>) -> bool {
    matches!(result, Err(MailError::Temporary(_)))
}

#[tokio::test]
async fn an_accepted_message_is_ok() {
    send_to(normal, "").await.unwrap();
}

#[tokio::test]
async fn a_recipient_refused_for_good_is_permanent() {
    let result = send_to(
        |line| match line {
            l if l.starts_with("RCPT") => Step::Reply("550 5.1.1 no such user"),
            l => normal(l),
        },
        "",
    )
    .await;
    assert!(is_permanent(&result), "{result:?}");
    assert!(format!("{result:?}").contains("no such user"), "{result:?}");
}

#[tokio::test]
async fn a_recipient_refused_for_now_is_temporary() {
    let result = send_to(
        |line| match line {
            l if l.starts_with("RCPT") => Step::Reply("451 4.3.0 try again later"),
            l => normal(l),
        },
        "",
    )
    .await;
    assert!(is_temporary(&result), "{result:?}");
}

#[tokio::test]
async fn a_message_refused_after_its_data_is_permanent() {
    let result = send_to(
        |line| match line {
            "." => Step::Reply("554 5.7.1 message refused"),
            l => normal(l),
        },
        "",
    )
    .await;
    assert!(is_permanent(&result), "{result:?}");
}

#[tokio::test]
async fn a_busy_server_is_temporary() {
    let result = send_to(
        |line| match line {
            "CONNECT" => Step::Reply("421 4.3.2 too busy"),
            l => normal(l),
        },
        "",
    )
    .await;
    assert!(is_temporary(&result), "{result:?}");
}

#[tokio::test]
async fn a_refused_login_is_temporary_and_hides_the_password() {
    let result = send_to(
        |line| match line {
            l if l.starts_with("EHLO") => Step::Reply("250-fake\r\n250 AUTH PLAIN"),
            l if l.starts_with("AUTH") => Step::Reply("535 5.7.8 bad credentials"),
            l => normal(l),
        },
        "me:s3cret@",
    )
    .await;
    assert!(is_temporary(&result), "{result:?}");
    assert!(!format!("{result:?}").contains("s3cret"), "{result:?}");
}

#[tokio::test]
async fn a_dropped_connection_is_temporary() {
    let result = send_to(
        |line| match line {
            l if l.starts_with("MAIL") => Step::Close,
            l => normal(l),
        },
        "",
    )
    .await;
    assert!(is_temporary(&result), "{result:?}");
}

#[tokio::test]
async fn a_silent_server_times_out_as_temporary() {
    let addr = start(|_| Step::Hang).await;
    let timeout = Duration::from_millis(300);
    let mailer =
        SmtpMailer::new(&format!("smtp://{addr}"), "noreply@holdfast.test", timeout).unwrap();
    let started = Instant::now();
    let result = mailer.send("eml_1", &email()).await;
    assert!(is_temporary(&result), "{result:?}");
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_bad_recipient_is_permanent_without_connecting() {
    let mailer = SmtpMailer::new(
        "smtp://127.0.0.1:9",
        "noreply@holdfast.test",
        Duration::from_secs(1),
    )
    .unwrap();
    let mut email = email();
    email.to = "not an address".to_owned();
    let result = mailer.send("eml_1", &email).await;
    assert!(is_permanent(&result), "{result:?}");
}
