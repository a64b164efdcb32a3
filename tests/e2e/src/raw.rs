//! Requests exactly as written: any method, any request target (percent-escapes, `//`, `..`),
//! any header bytes and any body bytes. An HTTP client library would normalise or refuse most
//! of what the hostile-input tests need to send.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request to send byte for byte.
#[derive(Debug, Clone, Default)]
pub struct RawRequest {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, Vec<u8>)>,
    pub body: Vec<u8>,
}

/// What came back.
#[derive(Debug)]
pub struct RawReply {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl RawReply {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// A header's value, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().skip(1).find_map(|line| {
            let (n, v) = line.split_once(':')?;
            n.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

impl RawRequest {
    pub fn new(method: &str, target: &str) -> Self {
        Self {
            method: method.to_owned(),
            target: target.to_owned(),
            ..Self::default()
        }
    }

    #[must_use]
    pub fn header(mut self, name: &str, value: impl Into<Vec<u8>>) -> Self {
        self.headers.push((name.to_owned(), value.into()));
        self
    }

    #[must_use]
    pub fn json(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self.header("content-type", "application/json")
    }

    /// Sends it on a connection of its own to `base_url` (`http://host:port`), reads the whole
    /// answer; `None` when the server closed the connection without one.
    pub async fn send(&self, base_url: &str) -> Option<RawReply> {
        let address = base_url.trim_start_matches("http://");
        let stream = TcpStream::connect(address).await.expect("connect");
        let wire = self.wire(address);
        // The server may answer (413) and close before it has read a large body: write and read
        // at once, and keep whatever arrived before a reset.
        let (mut reader, mut writer) = stream.into_split();
        let writing = tokio::spawn(async move {
            let _ = writer.write_all(&wire).await;
            writer
        });
        let mut answer = Vec::new();
        let read = tokio::time::timeout(Duration::from_secs(30), reader.read_to_end(&mut answer));
        let _ = read.await;
        drop(writing.await);
        parse(&answer)
    }

    /// Sends it, then resets the connection (RST, not a polite close) after `after`, before any
    /// answer: a client that hangs up mid-request.
    pub async fn reset_after(&self, base_url: &str, after: Duration) {
        let address = base_url.trim_start_matches("http://");
        let mut stream = TcpStream::connect(address).await.expect("connect");
        stream
            .write_all(&self.wire(address))
            .await
            .expect("request written");
        tokio::time::sleep(after).await;
        stream.set_zero_linger().expect("linger");
        drop(stream);
    }

    fn wire(&self, address: &str) -> Vec<u8> {
        let mut wire = format!(
            "{} {} HTTP/1.1\r\nhost: {address}\r\n",
            self.method, self.target
        )
        .into_bytes();
        for (name, value) in &self.headers {
            wire.extend_from_slice(name.as_bytes());
            wire.extend_from_slice(b": ");
            wire.extend_from_slice(value);
            wire.extend_from_slice(b"\r\n");
        }
        wire.extend_from_slice(
            format!(
                "content-length: {}\r\nconnection: close\r\n\r\n",
                self.body.len()
            )
            .as_bytes(),
        );
        wire.extend_from_slice(&self.body);
        wire
    }
}

fn parse(answer: &[u8]) -> Option<RawReply> {
    let split = answer.windows(4).position(|w| w == b"\r\n\r\n")?;
    let head = String::from_utf8_lossy(&answer[..split]).into_owned();
    let status = head.split(' ').nth(1)?.parse().ok()?;
    let raw_body = &answer[split + 4..];
    let chunked = head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked");
    let body = if chunked {
        dechunk(raw_body)
    } else {
        raw_body.to_vec()
    };
    Some(RawReply { status, head, body })
}

fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = raw.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&raw[..line_end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.trim(), 16).ok())
            .unwrap_or(0);
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        let end = (start + size).min(raw.len());
        out.extend_from_slice(&raw[start..end]);
        raw = raw.get(end + 2..).unwrap_or_default();
    }
    out
}
