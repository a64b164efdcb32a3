//! Wake-ups across processes, on PostgreSQL: a process that writes notifications for the claim
//! (rather than handing them to its own deliverers) announces it on a channel, and every
//! delivering process listens there and claims at once instead of at its next poll.
//!
//! An announcement carries nothing and is only a hint: a lost one (a listener reconnecting, an
//! announcer that cannot reach the database) costs latency, never a notification, since the
//! loops still poll. So the announcement is sent after the commit, on a connection of its own,
//! never inside the writing transaction: a `NOTIFY` there would take PostgreSQL's notification
//! lock at every commit and serialise the writers' commits behind each other.

use std::sync::Arc;
use std::time::Duration;

use diesel_async::{AsyncConnection, AsyncPgConnection, SimpleAsyncConnection};
use futures_util::StreamExt;
use secrecy::{ExposeSecret, SecretString};
use tokio::sync::mpsc;

use async_trait::async_trait;
use holdfast_domain::ports::{DeliveryHints, WakeUpSource};

/// The statements of the channel notifications written for the claim are announced on,
/// `holdfast_notifications_due`.
const LISTEN: &str = "LISTEN holdfast_notifications_due";
const NOTIFY: &str = "NOTIFY holdfast_notifications_due";

/// How long a listener or an announcer that failed to reach the database waits before the next
/// try (the loops poll meanwhile).
const RETRY_AFTER: Duration = Duration::from_secs(1);

/// How long a listener hears nothing before it checks that its connection still answers, and
/// how long that check, or an announcement, may take: a connection dropped in silence (a
/// firewall's idle timeout, a host gone without a reset) would otherwise be believed, or
/// waited on, for as long as the operating system's keepalive takes, hours by default.
const HEARTBEAT: Duration = Duration::from_secs(10);

/// The database's address, for the connections that announce and listen (PostgreSQL only).
#[derive(Clone)]
pub struct WakeUps {
    url: Arc<SecretString>,
    heartbeat: Duration,
}

impl std::fmt::Debug for WakeUps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WakeUps")
    }
}

/// Announces, from this process, that notifications were written for the claim: the first
/// write after a quiet spell at once, and then at most one announcement per `spacing`, for
/// everything written meanwhile. Under load a listener's loops are busy and claim every poll
/// anyway; an announcement per commit only multiplied their claims (measured: fewer
/// notifications delivered per second, later, docs/performance.md).
#[derive(Debug, Clone)]
pub struct Announcer {
    wanted: mpsc::Sender<()>,
}

impl Announcer {
    /// Announces, soon, that notifications wait for the claim (after their commit: the claim
    /// that follows must see them).
    pub fn announce(&self) {
        // Full: an announcement is already due, and this one goes with it.
        let _ = self.wanted.try_send(());
    }
}

impl WakeUps {
    pub(crate) fn new(url: String) -> Self {
        Self {
            url: Arc::new(SecretString::from(url)),
            heartbeat: HEARTBEAT,
        }
    }

    /// A listener that checks its connection after `every` heard in silence, and gives it up
    /// when the check takes longer than `every`; an announcer that gives its connection up
    /// when an announcement takes longer than `every` (10 s by default).
    #[must_use]
    pub fn heartbeat(self, every: Duration) -> Self {
        Self {
            heartbeat: every,
            ..self
        }
    }

    /// Starts this process's announcer, on the current tokio runtime, announcing at most once
    /// per `spacing`. It runs until every clone of it is dropped, with one connection, opened at
    /// the first announcement and opened again after one that failed or went unanswered.
    pub fn announcer(&self, spacing: Duration) -> Announcer {
        let (wanted, mut asked) = mpsc::channel(1);
        let (url, limit) = (self.url.clone(), self.heartbeat);
        tokio::spawn(async move {
            let mut conn: Option<AsyncPgConnection> = None;
            while asked.recv().await.is_some() {
                let failure = match tokio::time::timeout(limit, announce_on(&mut conn, &url)).await
                {
                    Ok(Ok(())) => None,
                    Ok(Err(error)) => Some(error),
                    Err(_) => Some("the connection stopped answering".to_owned()),
                };
                let pause = match failure {
                    None => spacing,
                    Some(error) => {
                        conn = None;
                        tracing::warn!(%error, "announcing notifications for the claim failed; listeners find them at their next poll");
                        RETRY_AFTER
                    }
                };
                tokio::time::sleep(pause).await;
            }
        });
        Announcer { wanted }
    }

    /// Pokes `hints` at each announcement heard on `conn`, checking the connection after each
    /// heartbeat heard in silence; why it was given up.
    async fn heard_until_lost(
        &self,
        conn: &mut AsyncPgConnection,
        hints: &dyn DeliveryHints,
    ) -> String {
        loop {
            // The stream is made again each turn: what the connection received meanwhile
            // waits in its channel, so nothing heard is lost between turns.
            let next = {
                let mut heard = std::pin::pin!(conn.notifications_stream());
                tokio::time::timeout(self.heartbeat, heard.next()).await
            };
            match next {
                Ok(Some(Ok(_))) => hints.due(),
                Ok(Some(Err(error))) => return error.to_string(),
                Ok(None) => return "the connection closed".to_owned(),
                Err(_silence) => {
                    match tokio::time::timeout(self.heartbeat, conn.batch_execute("SELECT 1")).await
                    {
                        Ok(Ok(())) => {}
                        Ok(Err(error)) => return error.to_string(),
                        Err(_) => return "the connection stopped answering".to_owned(),
                    }
                }
            }
        }
    }
}

#[async_trait]
impl WakeUpSource for WakeUps {
    /// Listens for announcements until dropped, telling `hints` of each one. While listening,
    /// `hints` hears so (`DeliveryHints::listening`), and the loops' claims that find nothing
    /// wait longer before the next; while not (the connection lost, the database unreachable),
    /// they poll as usual, and each (re)connection pokes them once for what was announced
    /// unheard.
    async fn listen(&self, hints: Arc<dyn DeliveryHints>) {
        loop {
            match AsyncPgConnection::establish(self.url.expose_secret()).await {
                Ok(mut conn) => match conn.batch_execute(LISTEN).await {
                    Ok(()) => {
                        let _listening = Listening::on(hints.as_ref());
                        hints.due();
                        let ended = self.heard_until_lost(&mut conn, hints.as_ref()).await;
                        tracing::warn!(error = %ended, "stopped listening for notifications announced for the claim; reconnecting");
                    }
                    Err(error) => {
                        tracing::warn!(%error, "listening for notifications announced for the claim failed");
                    }
                },
                Err(error) => {
                    tracing::warn!(%error, "connecting to listen for notifications announced for the claim failed");
                }
            }
            tokio::time::sleep(RETRY_AFTER).await;
        }
    }
}

/// `hints` listening, until dropped (the connection lost, or the listener stopped).
struct Listening<'a>(&'a dyn DeliveryHints);

impl<'a> Listening<'a> {
    fn on(hints: &'a dyn DeliveryHints) -> Self {
        hints.listening(true);
        Self(hints)
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.0.listening(false);
    }
}

/// Sends one announcement on `conn`, connecting first where there is none; why it failed.
async fn announce_on(
    conn: &mut Option<AsyncPgConnection>,
    url: &SecretString,
) -> Result<(), String> {
    let conn = match conn {
        Some(conn) => conn,
        None => conn.insert(
            AsyncPgConnection::establish(url.expose_secret())
                .await
                .map_err(|e| e.to_string())?,
        ),
    };
    conn.batch_execute(NOTIFY).await.map_err(|e| e.to_string())
}
