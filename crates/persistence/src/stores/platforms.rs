//! `PlatformStore` and `UserStore`.

use diesel::prelude::*;
use holdfast_domain::ids::{PlatformId, UserId};
use holdfast_domain::platform::Platform;
use holdfast_domain::ports::{NewPlatform, PlatformStore, StoreError, UserStore};
use holdfast_domain::user::User;

use super::{SqlStore, one_row};
use crate::conn::{Conn, Lock};
use crate::error::query_error;
use crate::rows::{
    NewKeyRow, NewPlatformRow, NewUserRow, PlatformRow, USER_COLUMNS, UserRow, convert_all,
};
use crate::schema::{api_keys, platforms as p, user_links, users as u};
use crate::stores::credentials::end_sessions;
use crate::stores::routing::{insert_connection, insert_plan};

/// The platform with its owner, default keys, sandbox connection and default plan, in the
/// caller's transaction.
async fn insert_platform(conn: &mut Conn, new: &NewPlatform) -> QueryResult<()> {
    conn.execute(
        diesel::insert_into(p::table).values(NewPlatformRow::of(&new.platform, &new.owner)),
    )
    .await?;
    insert_user(conn, &new.owner).await?;
    for key in &new.keys {
        conn.execute(diesel::insert_into(api_keys::table).values(NewKeyRow::from(key)))
            .await?;
    }
    insert_connection(conn, &new.connection).await?;
    insert_plan(conn, &new.plan).await
}

async fn insert_user(conn: &mut Conn, user: &User) -> QueryResult<()> {
    conn.execute(diesel::insert_into(u::table).values(NewUserRow::from(user)))
        .await
        .map(drop)
}

#[async_trait::async_trait]
impl PlatformStore for SqlStore {
    #[tracing::instrument(skip_all, fields(platform = %new.platform.id), err)]
    async fn create_platform_atomically(&self, new: &NewPlatform) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| insert_platform(conn, new).await)
            .await
            .map_err(query_error("platforms"))
    }

    #[tracing::instrument(skip_all, fields(platform = %new.platform.id), err)]
    async fn create_first_platform_atomically(
        &self,
        new: &NewPlatform,
    ) -> Result<bool, StoreError> {
        let mut conn = self.conn().await?;
        conn.transaction(async |conn| {
            conn.lock(Lock::FirstPlatform).await?;
            let exists: bool = conn
                .get_result(diesel::select(diesel::dsl::exists(p::table.select(p::id))))
                .await?;
            if exists {
                return Ok(false);
            }
            insert_platform(conn, new).await?;
            Ok(true)
        })
        .await
        .map_err(query_error("platforms"))
    }

    async fn get_platform(&self, id: &PlatformId) -> Result<Option<Platform>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<PlatformRow, _>(p::table.filter(p::id.eq(id.as_str())))
            .await
            .optional()
            .map_err(query_error("platforms"))?
            .map(Platform::try_from)
            .transpose()
    }

    async fn list_platforms(&self) -> Result<Vec<Platform>, StoreError> {
        let mut conn = self.conn().await?;
        let rows = conn
            .load::<PlatformRow, _>(p::table.order(p::id.asc()))
            .await
            .map_err(query_error("platforms"))?;
        convert_all(rows)
    }
}

#[async_trait::async_trait]
impl UserStore for SqlStore {
    async fn insert_user(&self, user: &User) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        insert_user(&mut conn, user)
            .await
            .map_err(query_error("users.email"))
    }

    async fn get_user(
        &self,
        platform: &PlatformId,
        id: &UserId,
    ) -> Result<Option<User>, StoreError> {
        let mut conn = self.conn().await?;
        conn.first::<UserRow, _>(platform_user(platform.as_str(), id.as_str()).select(USER_COLUMNS))
            .await
            .optional()
            .map_err(query_error("users"))?
            .map(User::try_from)
            .transpose()
    }

    async fn list_users(&self, platform: &PlatformId) -> Result<Vec<User>, StoreError> {
        let mut conn = self.conn().await?;
        let rows = conn
            .load::<UserRow, _>(
                u::table
                    .select(USER_COLUMNS)
                    .filter(u::platform_id.eq(platform.as_str()))
                    .order(u::id.asc()),
            )
            .await
            .map_err(query_error("users"))?;
        convert_all(rows)
    }

    async fn delete_user(&self, platform: &PlatformId, id: &UserId) -> Result<(), StoreError> {
        let mut conn = self.conn().await?;
        // Its sessions and links go with it: none signs anyone in again.
        conn.transaction(async |conn| {
            conn.execute(diesel::delete(platform_user(
                platform.as_str(),
                id.as_str(),
            )))
            .await
            .and_then(one_row)?;
            end_sessions(conn, platform, id).await?;
            conn.execute(diesel::delete(
                user_links::table
                    .filter(user_links::platform_id.eq(platform.as_str()))
                    .filter(user_links::user_id.eq(id.as_str())),
            ))
            .await
            .map(drop)
        })
        .await
        .map_err(query_error("users"))
    }
}

#[diesel::dsl::auto_type(no_type_alias)]
fn platform_user<'a>(platform: &'a str, id: &'a str) -> _ {
    u::table
        .filter(u::platform_id.eq(platform))
        .filter(u::id.eq(id))
}
