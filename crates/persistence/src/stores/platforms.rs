//! `PlatformStore` and `UserStore`, written once for both backends.

macro_rules! platform_and_user_stores {
    ($store:ident, $schema:ident) => {
        #[async_trait::async_trait]
        impl holdfast_domain::ports::PlatformStore for $store {
            #[tracing::instrument(skip_all, fields(platform = %new.platform.id), err)]
            async fn create_platform_atomically(
                &self,
                new: &NewPlatform,
            ) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    Self::insert_platform_on(conn, new).await
                })
                .await
                .map_err(query_error("platforms"))
            }

            #[tracing::instrument(skip_all, fields(platform = %new.platform.id), err)]
            async fn create_first_platform_atomically(
                &self,
                new: &NewPlatform,
            ) -> Result<bool, StoreError> {
                use crate::schema::$schema::platforms as p;
                let mut conn = self.conn().await?;
                conn.transaction::<_, diesel::result::Error, _>(async |conn| {
                    // Serialises concurrent bootstraps before the emptiness check.
                    diesel::sql_query(<Self as crate::stores::Backend>::FIRST_PLATFORM_LOCK)
                        .execute(conn)
                        .await?;
                    let exists: bool = diesel::select(diesel::dsl::exists(p::table.select(p::id)))
                        .get_result(conn)
                        .await?;
                    if exists {
                        return Ok(false);
                    }
                    Self::insert_platform_on(conn, new).await?;
                    Ok(true)
                })
                .await
                .map_err(query_error("platforms"))
            }

            async fn get_platform(&self, id: &PlatformId) -> Result<Option<Platform>, StoreError> {
                use crate::schema::$schema::platforms as p;
                let mut conn = self.conn().await?;
                p::table
                    .filter(p::id.eq(id.as_str()))
                    .first::<PlatformRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("platforms"))?
                    .map(Platform::try_from)
                    .transpose()
            }

            async fn list_platforms(&self) -> Result<Vec<Platform>, StoreError> {
                use crate::schema::$schema::platforms as p;
                let mut conn = self.conn().await?;
                let rows = p::table
                    .order(p::id.asc())
                    .load::<PlatformRow>(&mut conn)
                    .await
                    .map_err(query_error("platforms"))?;
                convert_all(rows)
            }
        }

        impl $store {
            async fn insert_platform_on(
                conn: &mut <Self as crate::stores::Backend>::Conn,
                new: &NewPlatform,
            ) -> diesel::QueryResult<()> {
                use crate::schema::$schema::platforms as p;
                let platform = &new.platform;
                diesel::insert_into(p::table)
                    .values((
                        p::id.eq(platform.id.as_str()),
                        p::name.eq(platform.name.as_str()),
                        p::owner_id.eq(new.owner.id.as_str()),
                        p::created_on.eq(platform.created_on),
                    ))
                    .execute(conn)
                    .await?;
                Self::insert_user_on(conn, &new.owner).await?;
                for key in &new.keys {
                    Self::insert_key_on(conn, key).await?;
                }
                Self::insert_connection_on(conn, &new.connection).await?;
                Self::insert_plan_on(conn, &new.plan).await?;
                Ok(())
            }

            async fn insert_user_on(
                conn: &mut <Self as crate::stores::Backend>::Conn,
                user: &User,
            ) -> diesel::QueryResult<()> {
                use crate::schema::$schema::users as u;
                diesel::insert_into(u::table)
                    .values((
                        u::id.eq(user.id.as_str()),
                        u::platform_id.eq(user.platform_id.as_str()),
                        u::email.eq(user.email.as_str()),
                        u::created_on.eq(user.created_on),
                    ))
                    .execute(conn)
                    .await
                    .map(drop)
            }
        }

        #[async_trait::async_trait]
        impl holdfast_domain::ports::UserStore for $store {
            async fn insert_user(&self, user: &User) -> Result<(), StoreError> {
                let mut conn = self.conn().await?;
                Self::insert_user_on(&mut conn, user)
                    .await
                    .map_err(query_error("users.email"))
            }

            async fn get_user(
                &self,
                platform: &PlatformId,
                id: &UserId,
            ) -> Result<Option<User>, StoreError> {
                use crate::schema::$schema::users as u;
                let mut conn = self.conn().await?;
                u::table
                    .filter(u::platform_id.eq(platform.as_str()))
                    .filter(u::id.eq(id.as_str()))
                    .first::<UserRow>(&mut conn)
                    .await
                    .optional()
                    .map_err(query_error("users"))?
                    .map(User::try_from)
                    .transpose()
            }

            async fn list_users(&self, platform: &PlatformId) -> Result<Vec<User>, StoreError> {
                use crate::schema::$schema::users as u;
                let mut conn = self.conn().await?;
                let rows = u::table
                    .filter(u::platform_id.eq(platform.as_str()))
                    .order(u::id.asc())
                    .load::<UserRow>(&mut conn)
                    .await
                    .map_err(query_error("users"))?;
                convert_all(rows)
            }

            async fn delete_user(
                &self,
                platform: &PlatformId,
                id: &UserId,
            ) -> Result<(), StoreError> {
                use crate::schema::$schema::users as u;
                let mut conn = self.conn().await?;
                let n = diesel::delete(
                    u::table
                        .filter(u::platform_id.eq(platform.as_str()))
                        .filter(u::id.eq(id.as_str())),
                )
                .execute(&mut conn)
                .await
                .map_err(query_error("users"))?;
                expect_one_row(n)
            }
        }
    };
}
