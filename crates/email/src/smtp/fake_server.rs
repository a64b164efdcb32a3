//! A scripted SMTP server, to make a real lettre client meet each kind of failure.

use std::net::SocketAddr;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpListener;

pub(super) enum Step {
    Reply(&'static str),
    /// Say nothing and keep the connection open.
    Hang,
    Close,
}

/// What a well-behaved server says. The script sees `CONNECT` for the greeting, each command
/// line, and `.` for the end of the message data.
pub(super) fn normal(line: &str) -> Step {
    let verb = line
        .split(' ')
        .next()
        .unwrap_or_default()
        .to_ascii_uppercase();
    Step::Reply(match verb.as_str() {
        "CONNECT" => "220 fake ESMTP",
        "EHLO" => "250 fake",
        "DATA" => "354 go ahead",
        "QUIT" => "221 bye",
        "MAIL" | "RCPT" | "RSET" | "." => "250 ok",
        _ => "502 not implemented",
    })
}

/// Serves connections until the test ends.
pub(super) async fn start(script: fn(&str) -> Step) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            tokio::spawn(async move {
                let (read, mut write) = stream.into_split();
                let mut lines = BufReader::new(read).lines();
                let mut in_data = false;
                let mut next = Some("CONNECT".to_owned());
                while let Some(line) = next.take() {
                    if in_data && line != "." {
                        next = lines.next_line().await.ok().flatten();
                        continue;
                    }
                    match script(&line) {
                        Step::Reply(reply) => {
                            in_data = reply.starts_with("354");
                            let sent = write.write_all(format!("{reply}\r\n").as_bytes()).await;
                            if sent.is_err() || reply.starts_with("221") {
                                return;
                            }
                        }
                        Step::Hang => std::future::pending::<()>().await,
                        Step::Close => return,
                    }
                    next = lines.next_line().await.ok().flatten();
                }
            });
        }
    });
    addr
}
