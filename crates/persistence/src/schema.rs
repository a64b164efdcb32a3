//! Table definitions for both backends: one text, two timestamp types.

pub mod pg {
    use diesel::sql_types::Timestamptz as Ts;
    include!("schema_tables.rs");
}

pub mod sqlite {
    use diesel::sql_types::TimestamptzSqlite as Ts;
    include!("schema_tables.rs");
}
