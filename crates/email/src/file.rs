//! The development mailer: one `.eml` file per email.

use std::path::PathBuf;

use async_trait::async_trait;
use holdfast_domain::ports::{MailError, Mailer, OutgoingEmail};
use lettre::message::Mailbox;

use crate::MailerSetupError;
use crate::message::{compose, parse_mailbox};

/// Writes each email to `DIR/ULID.eml`; file names sort in the order the emails were sent.
#[derive(Debug, Clone)]
pub struct FileMailer {
    dir: PathBuf,
    from: Mailbox,
}

impl FileMailer {
    /// Creates `dir` if it is missing.
    pub fn new(dir: impl Into<PathBuf>, from: &str) -> Result<Self, MailerSetupError> {
        let dir = dir.into();
        let from = parse_mailbox(from).map_err(|reason| MailerSetupError::From {
            address: from.to_owned(),
            reason,
        })?;
        std::fs::create_dir_all(&dir).map_err(|source| MailerSetupError::Directory {
            dir: dir.clone(),
            source,
        })?;
        Ok(Self { dir, from })
    }
}

#[async_trait]
impl Mailer for FileMailer {
    async fn send(&self, id: &str, email: &OutgoingEmail) -> Result<(), MailError> {
        let composed = compose(&self.from, id, email)?;
        let path = self.dir.join(format!("{}.eml", composed.id));
        // Written under another name and renamed, so a reader never sees half a message.
        let partial = path.with_extension("eml.partial");
        let failed = |e: std::io::Error| {
            MailError::Temporary(format!("cannot write {}: {e}", path.display()))
        };
        // The directory may have been cleaned away since start-up.
        tokio::fs::create_dir_all(&self.dir).await.map_err(failed)?;
        tokio::fs::write(&partial, composed.message.formatted())
            .await
            .map_err(failed)?;
        tokio::fs::rename(&partial, &path).await.map_err(failed)?;
        tracing::info!(path = %path.display(), "email written to file");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn email(to: &str) -> OutgoingEmail {
        OutgoingEmail {
            to: to.to_owned(),
            subject: "Your receipt".to_owned(),
            body: "Payment pay_123 succeeded.".to_owned(),
        }
    }

    fn files(dir: &std::path::Path) -> Vec<PathBuf> {
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|entry| entry.unwrap().path())
            .collect();
        files.sort();
        files
    }

    #[tokio::test]
    async fn writes_one_eml_file_per_email() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("data").join("mail");
        let mailer = FileMailer::new(&dir, "noreply@holdfast.test").unwrap();
        assert!(dir.is_dir(), "the directory is created");

        mailer.send("eml_a", &email("ana@shop.test")).await.unwrap();
        mailer.send("eml_b", &email("bea@shop.test")).await.unwrap();

        let files = files(&dir);
        assert_eq!(files.len(), 2, "{files:?}");
        assert!(files.iter().all(|f| f.extension().unwrap() == "eml"));
        let text = std::fs::read_to_string(&files[0]).unwrap();
        assert!(text.contains("Subject: Your receipt\r\n"), "{text}");
        assert!(text.contains("To: ana@shop.test\r\n"), "{text}");
        assert!(text.contains("From: noreply@holdfast.test\r\n"), "{text}");
        assert!(
            text.ends_with("\r\n\r\nPayment pay_123 succeeded."),
            "{text}"
        );
    }

    #[tokio::test]
    async fn recreates_a_removed_directory() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("mail");
        let mailer = FileMailer::new(&dir, "noreply@holdfast.test").unwrap();
        std::fs::remove_dir(&dir).unwrap();

        mailer.send("eml_1", &email("ana@shop.test")).await.unwrap();
        assert_eq!(files(&dir).len(), 1);
    }

    #[tokio::test]
    async fn a_bad_recipient_is_permanent_and_writes_nothing() {
        let root = tempfile::tempdir().unwrap();
        let mailer = FileMailer::new(root.path(), "noreply@holdfast.test").unwrap();
        let result = mailer.send("eml_1", &email("nobody")).await;
        assert!(matches!(result, Err(MailError::Permanent(_))), "{result:?}");
        assert!(files(root.path()).is_empty());
    }

    #[tokio::test]
    async fn an_unwritable_directory_is_temporary() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("mail");
        let mailer = FileMailer::new(&dir, "noreply@holdfast.test").unwrap();
        // A file where the directory should be: creating the directory fails, even as root.
        std::fs::remove_dir(&dir).unwrap();
        std::fs::write(&dir, b"").unwrap();
        let result = mailer.send("eml_1", &email("ana@shop.test")).await;
        assert!(matches!(result, Err(MailError::Temporary(_))), "{result:?}");
    }
}
