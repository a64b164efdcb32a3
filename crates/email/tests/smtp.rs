//! `SmtpMailer` against a real SMTP server: Python's aiosmtpd, storing what it receives in a
//! Maildir. Without aiosmtpd (`pip install aiosmtpd`) the delivery test fails when `CI=true` and
//! is skipped with a notice otherwise.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use holdfast_domain::ports::{MailError, Mailer, OutgoingEmail};
use holdfast_email::SmtpMailer;

const FROM: &str = "Holdfast <noreply@holdfast.test>";

fn aiosmtpd_available(test: &str) -> bool {
    let found = Command::new("python3")
        .args(["-m", "aiosmtpd", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|status| status.success());
    if !found {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`python3 -m aiosmtpd` is required with CI=true: pip install aiosmtpd"
        );
        eprintln!("SKIPPED {test}: `python3 -m aiosmtpd` is not available (pip install aiosmtpd)");
    }
    found
}

/// A port nobody listens on right now.
fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind a free port")
        .port()
}

/// The server process, stopped when the test ends however it ends.
struct Aiosmtpd {
    child: Child,
    addr: SocketAddr,
    maildir: PathBuf,
}

impl Aiosmtpd {
    fn start(maildir: &Path) -> Self {
        let addr = SocketAddr::from(([127, 0, 0, 1], free_port()));
        let child = Command::new("python3")
            .args(["-m", "aiosmtpd", "-n", "-l", &addr.to_string()])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(maildir)
            .stdout(Stdio::null())
            .spawn()
            .expect("start python3 -m aiosmtpd");
        let mut server = Self {
            child,
            addr,
            maildir: maildir.to_owned(),
        };
        server.wait_until_listening();
        server
    }

    fn wait_until_listening(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(15);
        while TcpStream::connect(self.addr).is_err() {
            if let Some(status) = self.child.try_wait().expect("check on aiosmtpd") {
                panic!("aiosmtpd exited with {status}");
            }
            assert!(
                Instant::now() < deadline,
                "aiosmtpd is not listening on {}",
                self.addr
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The one message received, decoded by Python's own email parser.
    fn received(&self) -> serde_json::Value {
        const READ_BACK: &str = r#"
import email.policy, json, mailbox, sys
box = mailbox.Maildir(sys.argv[1], factory=None, create=False)
keys = box.keys()
assert len(keys) == 1, f"expected one message, found {len(keys)}"
msg = email.message_from_bytes(box.get_bytes(keys[0]), policy=email.policy.default)
print(json.dumps({name: str(msg[name]) for name in
    ["From", "To", "Subject", "Date", "Message-ID", "Content-Type", "X-RcptTo"]}
    | {"body": msg.get_content()}))
"#;
        let output = Command::new("python3")
            .args(["-c", READ_BACK])
            .arg(&self.maildir)
            .output()
            .expect("run python3 to read the maildir");
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        serde_json::from_slice(&output.stdout).expect("the reader prints JSON")
    }
}

impl Drop for Aiosmtpd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn delivers_to_a_real_smtp_server() {
    if !aiosmtpd_available("delivers_to_a_real_smtp_server") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let server = Aiosmtpd::start(&dir.path().join("maildir"));
    let mailer = SmtpMailer::new(
        &format!("smtp://{}", server.addr),
        FROM,
        Duration::from_secs(10),
    )
    .unwrap();

    let email = OutgoingEmail {
        to: "ana@shop.test".to_owned(),
        subject: "Reçu n° 42 — paid".to_owned(),
        body: "Payment pay_123 of 12,50 € succeeded.\nThank you.\n".to_owned(),
    };
    mailer.send("eml_test", &email).await.unwrap();

    let got = server.received();
    assert_eq!(got["Subject"], email.subject, "{got}");
    assert_eq!(got["To"], "ana@shop.test", "{got}");
    assert_eq!(
        got["X-RcptTo"], "ana@shop.test",
        "the envelope recipient: {got}"
    );
    assert_eq!(got["From"], FROM, "{got}");
    // lettre ends the data with CRLF.CRLF even after the body's own line end, so the server
    // keeps one more line end than was sent.
    assert_eq!(
        got["body"].as_str().unwrap().trim_end(),
        email.body.trim_end(),
        "{got}"
    );
    assert_eq!(
        got["Content-Type"], r#"text/plain; charset="utf-8""#,
        "{got}"
    );
    assert!(
        got["Message-ID"]
            .as_str()
            .unwrap()
            .ends_with("@holdfast.test>"),
        "{got}"
    );
    assert_ne!(got["Date"], "None", "{got}");
}

#[tokio::test]
async fn nothing_listening_is_temporary() {
    let mailer = SmtpMailer::new(
        &format!("smtp://127.0.0.1:{}", free_port()),
        FROM,
        Duration::from_secs(10),
    )
    .unwrap();
    let email = OutgoingEmail {
        to: "ana@shop.test".to_owned(),
        subject: "Receipt".to_owned(),
        body: "Paid.".to_owned(),
    };
    let result = mailer.send("eml_test", &email).await;
    assert!(matches!(result, Err(MailError::Temporary(_))), "{result:?}");
}
