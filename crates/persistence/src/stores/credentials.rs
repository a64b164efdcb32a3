//! `CredentialStore`: dashboard passwords, one-time links and sessions, every secret by hash.

use diesel::QueryResult;
use diesel::prelude::*;
use holdfast_domain::api_key::KeyHash;
use holdfast_domain::dashboard::{Session, SignedIn, UserLink};
use holdfast_domain::ids::{PlatformId, UserId};
use holdfast_domain::mode::Mode;
use holdfast_domain::ports::{CredentialStore, LinkEmail, StoreError};
use holdfast_domain::user::{Email, User};
use time::OffsetDateTime;

use super::SqlStore;
use super::emails::queue_email;
use crate::conn::Conn;
use crate::error::query_error;
use crate::rows::{USER_COLUMNS, UserRow, parse, stored_hash};
use crate::schema::{dashboard_sessions as s, user_links as l, users as u};
use crate::timestamp::Instant;

/// Ends every session of a user, in the caller's transaction.
pub(crate) async fn end_sessions(
    conn: &mut Conn,
    platform: &PlatformId,
    user: &UserId,
) -> QueryResult<()> {
    conn.execute(diesel::delete(
        s::table
            .filter(s::platform_id.eq(platform.as_str()))
            .filter(s::user_id.eq(user.as_str())),
    ))
    .await
    .map(drop)
}

/// Sets a user's password hash and ends the user's sessions; how many users it changed.
async fn write_password(
    conn: &mut Conn,
    platform: &PlatformId,
    user: &UserId,
    hash: &str,
) -> QueryResult<usize> {
    let changed = conn
        .execute(
            diesel::update(
                u::table
                    .filter(u::platform_id.eq(platform.as_str()))
                    .filter(u::id.eq(user.as_str())),
            )
            .set(u::password_hash.eq(Some(hash))),
        )
        .await?;
    end_sessions(conn, platform, user).await?;
    Ok(changed)
}

/// The session whose secret hashes to `id`.
fn session(id: &KeyHash) -> diesel::dsl::Filter<s::table, diesel::dsl::Eq<s::id_hash, &[u8]>> {
    s::table.filter(s::id_hash.eq(id.as_bytes().as_slice()))
}

/// A flash as its column keeps it: the page it waits for (no secret), a newline, the sealed
/// flash. The page is read with the session (`flash_page`), so only that page asks for it.
fn kept_flash(page: &str, sealed: &str) -> String {
    format!("{page}\n{sealed}")
}

/// The page a kept flash waits for.
fn flash_page(kept: &str) -> Option<&str> {
    kept.split_once('\n').map(|(page, _)| page)
}

/// A session's columns but its flash, which is read beside them.
const SESSION_COLUMNS: (
    s::id_hash,
    s::user_id,
    s::platform_id,
    s::mode,
    s::created_on,
    s::last_seen_on,
    s::expires_on,
) = (
    s::id_hash,
    s::user_id,
    s::platform_id,
    s::mode,
    s::created_on,
    s::last_seen_on,
    s::expires_on,
);

#[derive(Debug, Insertable, Queryable)]
#[diesel(table_name = s)]
struct SessionRow {
    id_hash: Vec<u8>,
    user_id: String,
    platform_id: String,
    mode: String,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    last_seen_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    expires_on: OffsetDateTime,
}

impl From<&Session> for SessionRow {
    fn from(session: &Session) -> Self {
        Self {
            id_hash: session.id_hash.as_bytes().to_vec(),
            user_id: session.user_id.to_string(),
            platform_id: session.platform_id.to_string(),
            mode: session.mode.as_str().to_owned(),
            created_on: session.created_on,
            last_seen_on: session.last_seen_on,
            expires_on: session.expires_on,
        }
    }
}

impl TryFrom<SessionRow> for Session {
    type Error = StoreError;
    fn try_from(row: SessionRow) -> Result<Self, StoreError> {
        Ok(Self {
            id_hash: stored_hash("session hash", row.id_hash)?,
            user_id: UserId::from_trusted(row.user_id),
            platform_id: PlatformId::from_trusted(row.platform_id),
            mode: parse("session mode", &row.mode)?,
            created_on: row.created_on,
            last_seen_on: row.last_seen_on,
            expires_on: row.expires_on,
        })
    }
}

#[derive(Debug, Insertable)]
#[diesel(table_name = l)]
struct NewLinkRow<'a> {
    token_hash: &'a [u8],
    user_id: &'a str,
    platform_id: &'a str,
    purpose: &'static str,
    #[diesel(serialize_as = Instant)]
    created_on: OffsetDateTime,
    #[diesel(serialize_as = Instant)]
    expires_on: OffsetDateTime,
}

#[async_trait::async_trait]
impl CredentialStore for SqlStore {
    async fn sign_in_candidates(&self, email: &Email) -> Result<Vec<(User, String)>, StoreError> {
        let mut conn = self.conn().await?;
        let rows: Vec<(UserRow, Option<String>)> = conn
            .load(
                u::table
                    .select((USER_COLUMNS, u::password_hash))
                    .filter(u::email.eq(email.as_str()))
                    .filter(u::password_hash.is_not_null())
                    .order((u::created_on.asc(), u::id.asc())),
            )
            .await
            .map_err(query_error("users"))?;
        rows.into_iter()
            .filter_map(|(row, hash)| Some((row, hash?)))
            .map(|(row, hash)| Ok((User::try_from(row)?, hash)))
            .collect()
    }

    async fn set_password(
        &self,
        platform: &PlatformId,
        user: &UserId,
        hash: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        let changed = conn
            .transaction(async |conn| write_password(conn, platform, user, hash).await)
            .await
            .map_err(query_error("users"))?;
        super::one_row(changed).map_err(|_| StoreError::NotFound)
    }

    async fn insert_link(
        &self,
        link: &UserLink,
        email: Option<LinkEmail>,
    ) -> Result<(), StoreError> {
        let row = NewLinkRow {
            token_hash: link.token_hash.as_bytes(),
            user_id: link.user_id.as_str(),
            platform_id: link.platform_id.as_str(),
            purpose: link.purpose.as_str(),
            created_on: link.created_on,
            expires_on: link.expires_on,
        };
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            conn.execute(diesel::insert_into(l::table).values(row))
                .await?;
            if let Some(queued) = &email {
                queue_email(conn, &queued.id, &queued.email, link.created_on).await?;
            }
            Ok(())
        })
        .await
        .map_err(query_error("user_links"))
    }

    async fn usable_link_user(
        &self,
        token: &KeyHash,
        now: OffsetDateTime,
    ) -> Result<Option<User>, StoreError> {
        let mut conn = self.conn().await?;
        let link = l::table
            .select(l::user_id)
            .filter(l::token_hash.eq(token.as_bytes().as_slice()))
            .filter(l::used_on.is_null())
            .filter(l::expires_on.gt(Instant(now)));
        let row: Option<UserRow> = conn
            .first(u::table.select(USER_COLUMNS).filter(u::id.eq_any(link)))
            .await
            .optional()
            .map_err(query_error("user_links"))?;
        row.map(User::try_from).transpose()
    }

    async fn redeem_link(
        &self,
        token: &KeyHash,
        now: OffsetDateTime,
        hash: &str,
    ) -> Result<Option<User>, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            // One statement decides: of two redemptions racing, only the first finds it unused.
            let redeemed: Option<(String, String)> = conn
                .get_result(
                    diesel::update(
                        l::table
                            .filter(l::token_hash.eq(token.as_bytes().as_slice()))
                            .filter(l::used_on.is_null())
                            .filter(l::expires_on.gt(Instant(now))),
                    )
                    .set(l::used_on.eq(Some(Instant(now))))
                    .returning((l::platform_id, l::user_id)),
                )
                .await
                .optional()?;
            let Some((platform, user)) = redeemed else {
                return Ok(None);
            };
            let (platform, user) = (
                PlatformId::from_trusted(platform),
                UserId::from_trusted(user),
            );
            if write_password(conn, &platform, &user, hash).await? != 1 {
                // The user is gone: nothing is kept, the link included.
                return Err(diesel::result::Error::RollbackTransaction);
            }
            conn.first::<UserRow, _>(
                u::table
                    .select(USER_COLUMNS)
                    .filter(u::id.eq(user.as_str())),
            )
            .await
            .map(Some)
        })
        .await
        .or_else(|e| match e {
            diesel::result::Error::RollbackTransaction => Ok(None),
            e => Err(e),
        })
        .map_err(query_error("user_links"))?
        .map(User::try_from)
        .transpose()
    }

    async fn insert_session(&self, session: &Session) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::insert_into(s::table).values(SessionRow::from(session)))
            .await
            .map(drop)
            .map_err(query_error("dashboard_sessions"))
    }

    async fn find_session(&self, id: &KeyHash) -> Result<Option<SignedIn>, StoreError> {
        let mut conn = self.conn().await?;
        let found: Option<(SessionRow, Option<String>, UserRow)> = conn
            .first(
                s::table
                    .inner_join(
                        u::table.on(u::id.eq(s::user_id).and(u::platform_id.eq(s::platform_id))),
                    )
                    .filter(s::id_hash.eq(id.as_bytes().as_slice()))
                    .select((SESSION_COLUMNS, s::flash, USER_COLUMNS)),
            )
            .await
            .optional()
            .map_err(query_error("dashboard_sessions"))?;
        found
            .map(|(session, flash, user)| {
                Ok(SignedIn {
                    session: Session::try_from(session)?,
                    user: User::try_from(user)?,
                    flash_for: flash.and_then(|kept| flash_page(&kept).map(str::to_owned)),
                })
            })
            .transpose()
    }

    async fn touch_session(&self, id: &KeyHash, now: OffsetDateTime) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::update(session(id)).set(s::last_seen_on.eq(Instant(now))))
            .await
            .map(drop)
            .map_err(query_error("dashboard_sessions"))
    }

    async fn set_session_mode(&self, id: &KeyHash, mode: Mode) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::update(session(id)).set(s::mode.eq(mode.as_str())))
            .await
            .map(drop)
            .map_err(query_error("dashboard_sessions"))
    }

    async fn set_session_flash(
        &self,
        id: &KeyHash,
        page: &str,
        flash: &str,
    ) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::update(session(id)).set(s::flash.eq(Some(kept_flash(page, flash)))))
            .await
            .map(drop)
            .map_err(query_error("dashboard_sessions"))
    }

    async fn take_session_flash(
        &self,
        id: &KeyHash,
        page: &str,
    ) -> Result<Option<String>, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            let flash: Option<Option<String>> =
                conn.first(session(id).select(s::flash)).await.optional()?;
            let Some(flash) = flash.flatten() else {
                return Ok(None);
            };
            // Left for another page: that page takes it.
            let Some(for_this_page) = flash
                .split_once('\n')
                .filter(|(kept_for, _)| *kept_for == page)
                .map(|(_, sealed)| sealed.to_owned())
            else {
                return Ok(None);
            };
            // Cleared only if still the one read: of two pages taking it at once, one shows it.
            let taken = conn
                .execute(
                    diesel::update(session(id).filter(s::flash.eq(&flash)))
                        .set(s::flash.eq(None::<String>)),
                )
                .await?;
            Ok((taken == 1).then_some(for_this_page))
        })
        .await
        .map_err(query_error("dashboard_sessions"))
    }

    async fn delete_session(&self, id: &KeyHash) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.execute(diesel::delete(session(id)))
            .await
            .map(drop)
            .map_err(query_error("dashboard_sessions"))
    }
}
