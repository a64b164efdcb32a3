//! The authorization decision of spec 5.3, 5.4 and 5.6, as one pure function.

use crate::api_key::{ApiKey, KeyValue};
use crate::ids::{KeyId, UserId};
use crate::mode::KeyType;

/// What an operation demands of the key that calls it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// Server-side operations: everything but tokenization (spec 5.4).
    Private,
    /// Hosted client scripts: only a public key, so a private key is never put in a web page.
    Public,
    /// Creating a single-use token: public keys (spec 5.3) and private keys alike.
    PublicOrPrivate,
}

impl Access {
    /// Whether a key of `key_type` may call an operation with this requirement.
    pub fn admits(self, key_type: KeyType) -> bool {
        match self {
            Access::Private => key_type == KeyType::Private,
            Access::Public => key_type == KeyType::Public,
            Access::PublicOrPrivate => true,
        }
    }
}

/// Who is calling: the scope every query of the request is bound to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Principal {
    /// The key's platform and mode: every query of the request is bound to them; the request
    /// sees only resources of this mode (spec 5.5).
    pub scope: crate::scope::Scope,
    /// Whether the key is public or private, already checked against the operation.
    pub key_type: KeyType,
    /// The key that authenticated the request (a public key's idempotency keys are scoped to
    /// it); `None` for a user signed in to the dashboard, who acts with a private key's access.
    pub key_id: Option<KeyId>,
    /// The user who generated the key, or the signed-in user.
    pub user_id: UserId,
}

/// Why a request is refused. The two map to 401 and 403; a 401 never says which of missing,
/// malformed, unknown, inactive or deleted it was, so the answer is no oracle for key guessing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// 401: the key is missing, malformed, unknown, inactive or deleted (spec 5.6).
    #[error("missing, unknown or inactive API key")]
    Unauthenticated,
    /// 403: an active key of the wrong type for the operation, e.g. a public key on a private
    /// route.
    #[error("this API key's type may not call this operation")]
    WrongKeyType,
}

/// The credential as presented and, when it parsed, the stored key its hash found.
#[derive(Debug, Clone, Copy)]
pub enum Presented<'a> {
    /// No `x-api-key` header was sent.
    Missing,
    /// The header does not read as a key value of any type and mode.
    Malformed,
    /// A well-formed key value, looked up by its hash.
    Parsed {
        /// The key value as sent.
        value: &'a KeyValue,
        /// The stored key with that hash; `None` when no key has it (never issued, or deleted).
        stored: Option<&'a ApiKey>,
    },
}

/// Decides a request's fate from its credential and the operation's requirement.
///
/// Authentication comes first: a wrong-type key that is also inactive gets 401, not 403, so a
/// deactivated key reveals nothing about the routes it could once call.
pub fn decide(presented: Presented<'_>, required: Access) -> Result<Principal, AuthError> {
    let Presented::Parsed {
        value,
        stored: Some(key),
    } = presented
    else {
        return Err(AuthError::Unauthenticated);
    };
    // The hash matched, but a key row only ever matches its own value; checking type and mode
    // against the prefix guards against a corrupted or hand-edited row.
    if !key.is_active() || key.key_type != value.key_type() || key.mode != value.mode() {
        return Err(AuthError::Unauthenticated);
    }
    if !required.admits(key.key_type) {
        return Err(AuthError::WrongKeyType);
    }
    Ok(Principal {
        scope: crate::scope::Scope::new(key.platform_id.clone(), key.mode),
        key_type: key.key_type,
        key_id: Some(key.id.clone()),
        user_id: key.created_by.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::api_key::{KeyName, KeyStatus};
    use crate::ids::PlatformId;
    use crate::mode::Mode;
    use time::macros::datetime;

    fn key(key_type: KeyType, mode: Mode, status: KeyStatus) -> (KeyValue, ApiKey) {
        let value = KeyValue::generate(key_type, mode, "ABCDEFGHIJKLMNOPQRSTUVWXYZ").unwrap();
        let stored = ApiKey {
            id: KeyId::from_suffix("1"),
            platform_id: PlatformId::from_suffix("1"),
            name: KeyName::parse("Backend").unwrap(),
            key_type,
            mode,
            status,
            hash: value.hash(),
            last4: value.last4(),
            created_by: UserId::from_suffix("1"),
            created_on: datetime!(2026-01-01 0:00 UTC),
            last_used_on: None,
        };
        (value, stored)
    }

    #[test]
    fn missing_malformed_and_unknown_are_401() {
        let (value, _) = key(KeyType::Private, Mode::Test, KeyStatus::Active);
        for access in [Access::Private, Access::Public, Access::PublicOrPrivate] {
            assert_eq!(
                decide(Presented::Missing, access),
                Err(AuthError::Unauthenticated)
            );
            assert_eq!(
                decide(Presented::Malformed, access),
                Err(AuthError::Unauthenticated)
            );
            let unknown = Presented::Parsed {
                value: &value,
                stored: None,
            };
            assert_eq!(decide(unknown, access), Err(AuthError::Unauthenticated));
        }
    }

    #[test]
    fn key_type_against_requirement_spec_5_3_5_4_5_6() {
        use Access::{Private, Public, PublicOrPrivate};
        use KeyStatus::{Active, Inactive};
        use KeyType as T;
        let table = [
            (T::Private, Active, Private, Ok(())),
            (T::Private, Active, PublicOrPrivate, Ok(())),
            (T::Private, Active, Public, Err(AuthError::WrongKeyType)),
            (T::Public, Active, Private, Err(AuthError::WrongKeyType)),
            (T::Public, Active, PublicOrPrivate, Ok(())),
            (T::Public, Active, Public, Ok(())),
            // Inactive is 401 whatever the requirement, never 403.
            (
                T::Private,
                Inactive,
                Private,
                Err(AuthError::Unauthenticated),
            ),
            (
                T::Public,
                Inactive,
                Private,
                Err(AuthError::Unauthenticated),
            ),
            (
                T::Public,
                Inactive,
                PublicOrPrivate,
                Err(AuthError::Unauthenticated),
            ),
        ];
        for &mode in Mode::ALL {
            for (key_type, status, access, expected) in table {
                let (value, stored) = key(key_type, mode, status);
                let got = decide(
                    Presented::Parsed {
                        value: &value,
                        stored: Some(&stored),
                    },
                    access,
                );
                match expected {
                    Ok(()) => {
                        let principal = got.unwrap();
                        assert_eq!(principal.scope.mode, mode);
                        assert_eq!(principal.key_type, key_type);
                        assert_eq!(principal.user_id, stored.created_by);
                    }
                    Err(e) => assert_eq!(got, Err(e), "{key_type:?} {status:?} {access:?}"),
                }
            }
        }
    }

    #[test]
    fn stored_row_disagreeing_with_prefix_is_refused() {
        let (value, mut stored) = key(KeyType::Private, Mode::Test, KeyStatus::Active);
        stored.mode = Mode::Live;
        let presented = Presented::Parsed {
            value: &value,
            stored: Some(&stored),
        };
        assert_eq!(
            decide(presented, Access::Private),
            Err(AuthError::Unauthenticated)
        );
    }
}
