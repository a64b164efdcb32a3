//! Infrastructure errors mapped to the ports' error contract.

use diesel::result::{DatabaseErrorKind, Error as DieselError};
use holdfast_domain::ports::StoreError;

/// Maps a query error; a unique violation becomes `Duplicate(rule)`.
pub fn query_error(rule: &'static str) -> impl Fn(DieselError) -> StoreError {
    move |err| match err {
        DieselError::DatabaseError(DatabaseErrorKind::UniqueViolation, _) => {
            StoreError::Duplicate(rule)
        }
        DieselError::NotFound => StoreError::NotFound,
        other => StoreError::Unexpected(other.to_string()),
    }
}

/// SQLite's "database is locked" (another process holds the write lock past the busy timeout,
/// or a read snapshot went stale): nothing was written, so trying again is safe.
pub fn is_busy(err: &DieselError) -> bool {
    matches!(err, DieselError::DatabaseError(DatabaseErrorKind::Unknown, info)
        if info.message().starts_with("database is locked")
            || info.message().starts_with("database table is locked"))
}

/// Maps any other failure (pool exhausted, connection refused, …).
pub fn unexpected(err: impl std::fmt::Display) -> StoreError {
    StoreError::Unexpected(err.to_string())
}
