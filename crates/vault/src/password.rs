//! `PasswordHasher`: argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane), run on the
//! blocking pool so a sign-in never stalls the threads that serve requests.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{PasswordHash, PasswordHasher as _, PasswordVerifier as _, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};
use holdfast_domain::dashboard::Password;
use holdfast_domain::ports::PasswordHasher;
use std::sync::{Arc, OnceLock};
use tokio::sync::Semaphore;

/// Hashes at once, at most: each takes 19 MiB and a core for tens of milliseconds, so a flood of
/// sign-ins waits its turn instead of taking the machine's memory.
const AT_ONCE: usize = 4;

/// Hashes and checks dashboard passwords.
#[derive(Debug, Clone)]
pub struct Argon2Hasher {
    /// What `verify` checks against when there is no account: a real hash, so a wrong email
    /// costs what a wrong password does. Made at the first need, not by every process.
    decoy: Arc<OnceLock<String>>,
    turns: Arc<Semaphore>,
}

impl Default for Argon2Hasher {
    fn default() -> Self {
        Self {
            decoy: Arc::default(),
            turns: Arc::new(Semaphore::new(AT_ONCE)),
        }
    }
}

impl Argon2Hasher {
    /// Runs `work` on the blocking pool when a turn is free.
    async fn in_turn<T: Send + 'static>(&self, work: impl FnOnce() -> T + Send + 'static) -> T {
        let _turn = self
            .turns
            .acquire()
            .await
            .expect("the semaphore is never closed");
        tokio::task::spawn_blocking(work)
            .await
            .expect("argon2 does not panic")
    }
}

fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("OWASP's argon2id parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

fn hash_now(password: &str) -> String {
    let salt = SaltString::generate(&mut OsRng);
    argon2()
        .hash_password(password.as_bytes(), &salt)
        .expect("argon2id takes any password up to 4 GiB")
        .to_string()
}

fn verify_now(password: &str, stored: &str) -> bool {
    // A stored hash that does not parse opens nothing.
    PasswordHash::new(stored).is_ok_and(|parsed| {
        argon2()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

#[async_trait::async_trait]
impl PasswordHasher for Argon2Hasher {
    async fn hash(&self, password: &Password) -> String {
        let password = password.expose().to_owned();
        self.in_turn(move || hash_now(&password)).await
    }

    async fn verify(&self, password: &Password, stored: Option<String>) -> bool {
        let password = password.expose().to_owned();
        let decoy = self.decoy.clone();
        self.in_turn(move || {
            if let Some(stored) = stored {
                return verify_now(&password, &stored);
            }
            // The answer is no; the work is done all the same.
            let decoy = decoy.get_or_init(|| hash_now("the decoy no account has"));
            std::hint::black_box(verify_now(&password, decoy));
            false
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_hash_opens_for_its_password_only() {
        let hasher = Argon2Hasher::default();
        let right = Password::parse("correct horse battery").unwrap();
        let wrong = Password::parse("correct horse battery!").unwrap();
        let stored = hasher.hash(&right).await;
        assert!(
            stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{stored}"
        );
        assert!(!stored.contains(right.expose()));
        assert_ne!(stored, hasher.hash(&right).await, "salted");
        assert!(hasher.verify(&right, Some(stored.clone())).await);
        assert!(!hasher.verify(&wrong, Some(stored)).await);
        assert!(!hasher.verify(&right, Some("not a hash".into())).await);
        let decoy = Password::parse("the decoy no account has").unwrap();
        assert!(!hasher.verify(&decoy, None).await, "no account, no entry");
    }
}
