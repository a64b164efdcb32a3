//! `PasswordHasher`: argon2id with OWASP's parameters (19 MiB, 2 passes, 1 lane), run on the
//! blocking pool so a sign-in never stalls the threads that serve requests.

use argon2::password_hash::rand_core::OsRng;
use argon2::password_hash::{ParamsString, PasswordHash, PasswordHasher as _, SaltString};
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
    /// What `verify_any` checks against when there is no account: a real hash, so a wrong
    /// email costs what a wrong password does. Made at the first need, not by every process.
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
    #[expect(
        clippy::expect_used,
        reason = "the semaphore is owned here and never closed; argon2 over bounded input does \
                  not panic, and if it did the request's task answers 500 (`run_to_end`)"
    )]
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

#[expect(
    clippy::expect_used,
    reason = "constant parameters, checked by every test that hashes"
)]
fn argon2() -> Argon2<'static> {
    let params = Params::new(19 * 1024, 2, 1, None).expect("OWASP's argon2id parameters");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// What one argon2 computation is shared by, besides the salt: hashes of the same algorithm,
/// version, parameters (as written) and length, with one salt, differ only in the password.
type Shape = (String, Option<u32>, String, usize);

fn shape(hash: &PasswordHash, output: argon2::password_hash::Output) -> Shape {
    (
        hash.algorithm.to_string(),
        hash.version,
        hash.params.to_string(),
        output.len(),
    )
}

/// The shape of the hashes `hash_now` makes today.
#[expect(
    clippy::expect_used,
    reason = "constant parameters always write, checked by the tests"
)]
fn todays_shape() -> Shape {
    let params = ParamsString::try_from(argon2().params()).expect("today's parameters are written");
    (
        Algorithm::Argon2id.ident().to_string(),
        Some(Version::V0x13.into()),
        params.to_string(),
        Params::DEFAULT_OUTPUT_LEN,
    )
}

/// `password` hashed with today's parameters and the salt of the first of `alike` made
/// today whose salt argon2 takes (a salt read from the database may be anything), so that
/// they share a computation at sign-in; else with a fresh salt. A hash of another shape
/// would not share one whatever its salt.
#[expect(
    clippy::expect_used,
    reason = "a fresh salt and a password bounded by `Password` (128 characters) always hash"
)]
fn hash_now(password: &str, alike: &[String]) -> String {
    let today = todays_shape();
    let borrowed = alike
        .iter()
        .filter_map(|stored| PasswordHash::new(stored).ok())
        .filter(|stored| {
            stored
                .hash
                .is_some_and(|output| shape(stored, output) == today)
        })
        .filter_map(|stored| stored.salt)
        .find_map(|salt| argon2().hash_password(password.as_bytes(), salt).ok());
    borrowed.map_or_else(
        || {
            let fresh = SaltString::generate(&mut OsRng);
            argon2()
                .hash_password(password.as_bytes(), &fresh)
                .expect("argon2id takes any password up to 4 GiB")
                .to_string()
        },
        |hash| hash.to_string(),
    )
}

/// The position of the first of `stored` that `password` opens, and how many argon2
/// computations that took: one per salt and shape among them, whichever opens.
fn first_opened(password: &str, stored: &[String]) -> (Option<usize>, usize) {
    let mut outputs: Vec<((Shape, String), Option<argon2::password_hash::Output>)> = Vec::new();
    let mut opened = None;
    for (at, stored) in stored.iter().enumerate() {
        // A stored hash that does not parse, or has no salt or output, opens nothing.
        let Ok(parsed) = PasswordHash::new(stored) else {
            continue;
        };
        let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
            continue;
        };
        let shared = (shape(&parsed, expected), salt.as_str().to_owned());
        let made = outputs.iter().find(|(made, _)| *made == shared);
        let output = if let Some((_, output)) = made {
            *output
        } else {
            let output = Params::try_from(&parsed).ok().and_then(|params| {
                argon2()
                    .hash_password_customized(
                        password.as_bytes(),
                        Some(parsed.algorithm),
                        parsed.version,
                        params,
                        salt,
                    )
                    .ok()
                    .and_then(|made| made.hash)
            });
            outputs.push((shared, output));
            output
        };
        // `Output`'s equality takes the same time wherever the two differ; of two accounts
        // the password opens (one password, one salt), the oldest is signed in to.
        if opened.is_none() && output == Some(expected) {
            opened = Some(at);
        }
    }
    let computed = outputs
        .iter()
        .filter(|(_, output)| output.is_some())
        .count();
    (opened, computed)
}

/// `first_opened`, plus a run on `decoy` when no computation could be made (no account, or
/// none argon2 can compute), so that the answer's time tells nothing.
fn check(
    password: &str,
    stored: &[String],
    decoy: impl FnOnce() -> String,
) -> (Option<usize>, usize) {
    match first_opened(password, stored) {
        (_, 0) => {
            // The answer is no; the work is done all the same.
            let (_, runs) = first_opened(password, &[decoy()]);
            (None, std::hint::black_box(runs))
        }
        checked => checked,
    }
}

#[async_trait::async_trait]
impl PasswordHasher for Argon2Hasher {
    async fn hash(&self, password: &Password, alike: Vec<String>) -> String {
        let password = password.expose().to_owned();
        self.in_turn(move || hash_now(&password, &alike)).await
    }

    async fn verify_any(&self, password: &Password, stored: Vec<String>) -> Option<usize> {
        let password = password.expose().to_owned();
        let decoy = self.decoy.clone();
        self.in_turn(move || {
            let decoy = || {
                decoy
                    .get_or_init(|| hash_now("the decoy no account has", &[]))
                    .clone()
            };
            check(&password, &stored, decoy).0
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
        let stored = hasher.hash(&right, Vec::new()).await;
        assert!(
            stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"),
            "{stored}"
        );
        assert!(!stored.contains(right.expose()));
        assert_ne!(stored, hasher.hash(&right, Vec::new()).await, "salted");
        assert_eq!(
            hasher.verify_any(&right, vec![stored.clone()]).await,
            Some(0)
        );
        assert_eq!(hasher.verify_any(&wrong, vec![stored]).await, None);
        assert_eq!(
            hasher.verify_any(&right, vec!["not a hash".into()]).await,
            None
        );
        let decoy = Password::parse("the decoy no account has").unwrap();
        assert_eq!(
            hasher.verify_any(&decoy, Vec::new()).await,
            None,
            "no account, no entry"
        );
    }

    /// An email's accounts hashed alike share one computation: a wrong password costs one
    /// argon2 run however many accounts the email has, and a right one opens its own account.
    #[tokio::test]
    async fn hashes_made_alike_are_checked_in_one_computation() {
        let hasher = Argon2Hasher::default();
        let hash = async |password: &str, alike: &[&str]| {
            let alike = alike.iter().map(|stored| (*stored).to_owned()).collect();
            hasher
                .hash(&Password::parse(password).unwrap(), alike)
                .await
        };
        let first = hash("first password", &[]).await;
        let like = async |password: &str| hash(password, &[&first]).await;
        let second = like("second password").await;
        let third = like("first password").await;
        let salt = |stored: &str| PasswordHash::new(stored).unwrap().salt.unwrap().to_string();
        assert_eq!(salt(&second), salt(&first));
        assert_eq!(third, first, "the same password and salt: the same hash");
        let decoy = hash("the decoy password", &[]).await;
        let first_opened =
            |password: &str, stored: &[String]| check(password, stored, || decoy.clone());
        let accounts = [first.clone(), second.clone(), "not a hash".into()];
        // (password, the account it opens, argon2 runs)
        let cases = [
            ("first password", Some(0), 1),
            ("second password", Some(1), 1),
            ("nobody's password", None, 1),
        ];
        for (password, opens, runs) in cases {
            assert_eq!(
                first_opened(password, &accounts),
                (opens, runs),
                "{password}"
            );
        }
        // The same salt under other parameters: a computation of its own, and it opens.
        let parsed = PasswordHash::new(&first).unwrap();
        let older = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(8 * 1024, 1, 1, None).unwrap(),
        )
        .hash_password(b"older password", parsed.salt.unwrap())
        .unwrap()
        .to_string();
        let mixed = [first.clone(), older.clone()];
        assert_eq!(first_opened("older password", &mixed), (Some(1), 2));
        assert_eq!(first_opened("first password", &mixed), (Some(0), 2));
        // One password on two accounts: one hash, and the oldest account opens.
        assert_eq!(
            first_opened("first password", &[first.clone(), third]),
            (Some(0), 1)
        );
        // A salt argon2 refuses is not borrowed, nor one of a hash of another shape (it would
        // not share a computation): such a password gets a salt of its own.
        let unfit = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdA$aGFzaGhhc2hoYXNoaGFzaA";
        let made = hash("first password", &[unfit]).await;
        assert_ne!(salt(&made), "c2FsdA");
        assert_eq!(first_opened("first password", &[made]), (Some(0), 1));
        let apart = hash("second password", &[]).await;
        for alike in [[older.as_str(), apart.as_str()], [unfit, apart.as_str()]] {
            let made = hash("third password", &alike).await;
            assert_eq!(salt(&made), salt(&apart), "{alike:?}");
        }
        assert_ne!(salt(&hash("third password", &[&older]).await), salt(&older));
        // Made today means each of algorithm, version, parameters and length.
        let made_with = |algorithm, version, length| {
            let params = Params::new(19 * 1024, 2, 1, length).unwrap();
            Argon2::new(algorithm, version, params)
                .hash_password(b"x", &SaltString::generate(&mut OsRng))
                .unwrap()
                .to_string()
        };
        let today = made_with(Algorithm::Argon2id, Version::V0x13, None);
        let others = [
            made_with(Algorithm::Argon2i, Version::V0x13, None),
            made_with(Algorithm::Argon2id, Version::V0x10, None),
            made_with(Algorithm::Argon2id, Version::V0x13, Some(16)),
        ];
        for other in &others {
            let made = hash("third password", &[other, &today]).await;
            assert_eq!(salt(&made), salt(&today), "{other}");
        }
        // Made apart, with salts of their own: a computation each.
        assert_eq!(
            first_opened("second password", &[first, apart]),
            (Some(1), 2)
        );
        // No account, or none argon2 can compute: the decoy's run, and no entry.
        let other = "$pbkdf2-sha256$i=1000$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo";
        for stored in [
            vec![],
            vec![other.to_owned()],
            vec!["not a hash".to_owned()],
        ] {
            assert_eq!(
                first_opened("the decoy password", &stored),
                (None, 1),
                "{stored:?}"
            );
        }
    }
}
