//! Email bodies at rest: sealed by the vault when the outbox row is written, opened when the row
//! is leased for sending.
//!
//! A body can carry a one-time link (a password reset, an invitation) that sets a password for
//! an hour. Emptying it once sent is not enough: SQLite keeps the old page in its write-ahead
//! log until a checkpoint, PostgreSQL keeps the old row version until a vacuum, and both leave
//! the bytes in free space. Sealed, every copy is ciphertext. The seal is bound to the row's id,
//! so a sealed body cannot be moved to another row.
//!
//! Stored as `Sealed::to_text` writes it; a body written otherwise was written before sealing
//! (or by a database opened without a vault) and is read as it is.

use holdfast_domain::ports::{CardVault, Sealed};

/// `body` as the outbox keeps it for email `id`.
pub fn seal(vault: &dyn CardVault, id: &str, body: &str) -> String {
    vault.seal(&context(id), body).to_text()
}

/// Why a stored body cannot be sent.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Unopenable {
    #[error("the email's body is sealed and this process has no vault to open it")]
    NoVault,
    #[error("the email's body is sealed with a vault key this process does not hold, or damaged")]
    WrongKey,
}

/// The body of email `id` as stored, opened when sealed.
pub fn open(vault: Option<&dyn CardVault>, id: &str, stored: String) -> Result<String, Unopenable> {
    if !Sealed::is_text(&stored) {
        return Ok(stored);
    }
    let vault = vault.ok_or(Unopenable::NoVault)?;
    let sealed = Sealed::from_text(&stored).ok_or(Unopenable::WrongKey)?;
    vault
        .open(&context(id), &sealed)
        .map_err(|_| Unopenable::WrongKey)
}

fn context(id: &str) -> String {
    format!("email:{id}")
}

#[cfg(test)]
mod tests {
    use holdfast_domain::ports::VaultError;

    use super::*;

    /// A stand-in vault that "seals" by reversing bytes under its key id and context, enough to
    /// tell a round trip, a wrong context and a wrong key apart.
    struct Reversing(&'static str);

    impl CardVault for Reversing {
        fn seal(&self, context: &str, secret: &str) -> Sealed {
            Sealed {
                key_id: self.0.to_owned(),
                nonce: context.as_bytes().to_vec(),
                ciphertext: secret.bytes().rev().collect(),
            }
        }

        fn open(&self, context: &str, sealed: &Sealed) -> Result<String, VaultError> {
            if sealed.key_id != self.0 || sealed.nonce != context.as_bytes() {
                return Err(VaultError::Corrupt);
            }
            String::from_utf8(sealed.ciphertext.iter().rev().copied().collect())
                .map_err(|_| VaultError::Corrupt)
        }
    }

    #[test]
    fn a_sealed_body_opens_for_its_row_only() {
        let vault = Reversing("k1");
        let body = "Set your password: https://h/dashboard/reset?token=SECRET";
        let stored = seal(&vault, "eml_1", body);
        assert!(stored.starts_with("sealed:v1:k1:"));
        assert!(!stored.contains("SECRET"));
        assert_eq!(open(Some(&vault), "eml_1", stored.clone()).unwrap(), body);
        assert_eq!(
            open(Some(&vault), "eml_2", stored.clone()),
            Err(Unopenable::WrongKey)
        );
        assert_eq!(
            open(Some(&Reversing("k2")), "eml_1", stored.clone()),
            Err(Unopenable::WrongKey)
        );
        assert_eq!(open(None, "eml_1", stored), Err(Unopenable::NoVault));
    }

    #[test]
    fn a_body_written_before_sealing_is_read_as_it_is() {
        assert_eq!(open(None, "eml_1", "plain".into()).unwrap(), "plain");
        for damaged in ["sealed:v1:k1", "sealed:v1:k1:zz:00", "sealed:v1:k1:0:00"] {
            assert_eq!(
                open(Some(&Reversing("k1")), "eml_1", damaged.into()),
                Err(Unopenable::WrongKey),
                "{damaged}"
            );
        }
    }
}
