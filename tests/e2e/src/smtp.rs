//! A real SMTP server for the tests: aiosmtpd (from `PyPI`) writing what it receives into a `Maildir`,
//! read back from the files it wrote.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct SmtpServer {
    pub port: u16,
    dir: tempfile::TempDir,
    child: Option<Child>,
}

#[derive(Debug, Clone)]
pub struct Mail {
    pub to: String,
    pub subject: String,
    pub body: String,
}

/// A port nothing listens on yet.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl SmtpServer {
    pub fn url_for(port: u16) -> String {
        format!("smtp://127.0.0.1:{port}")
    }

    /// Starts aiosmtpd on `port` and waits until it accepts connections.
    pub fn start_on(port: u16) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let child = Command::new("python3")
            .args(["-m", "aiosmtpd", "-n", "-l", &format!("127.0.0.1:{port}")])
            .args(["-c", "aiosmtpd.handlers.Mailbox"])
            .arg(dir.path().join("maildir"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("python3 -m aiosmtpd (pip install aiosmtpd)");
        let deadline = Instant::now() + Duration::from_secs(15);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "aiosmtpd did not start on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            port,
            dir,
            child: Some(child),
        }
    }

    pub fn start() -> Self {
        Self::start_on(free_port())
    }

    pub fn url(&self) -> String {
        Self::url_for(self.port)
    }

    fn maildir(&self) -> PathBuf {
        self.dir.path().join("maildir").join("new")
    }

    pub fn mails(&self) -> Vec<Mail> {
        let Ok(entries) = std::fs::read_dir(self.maildir()) else {
            return Vec::new();
        };
        entries
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read_to_string(e.path()).ok())
            .map(|raw| parse(&raw))
            .collect()
    }

    pub async fn wait_for(&self, n: usize, limit: Duration) -> Vec<Mail> {
        let deadline = Instant::now() + limit;
        while self.mails().len() < n && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        self.mails()
    }
}

impl Drop for SmtpServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Headers up to the blank line (folded lines joined), then the body.
fn parse(raw: &str) -> Mail {
    let raw = raw.replace("\r\n", "\n");
    let (head, body) = raw.split_once("\n\n").unwrap_or((&raw, ""));
    let unfolded = head.replace("\n ", " ").replace("\n\t", " ");
    let header = |name: &str| {
        unfolded
            .lines()
            .find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_owned())
            })
            .unwrap_or_default()
    };
    let body = if header("Content-Transfer-Encoding").eq_ignore_ascii_case("quoted-printable") {
        quoted_printable(body)
    } else {
        body.to_owned()
    };
    Mail {
        to: header("To"),
        subject: header("Subject"),
        body,
    }
}

/// Decodes a quoted-printable body (RFC 2045 6.7): soft line breaks joined, `=XX` as its byte.
fn quoted_printable(body: &str) -> String {
    let joined = body.replace("=\n", "");
    let bytes = joined.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (bytes[i], hex) {
            (b'=', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
