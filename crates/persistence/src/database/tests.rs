use super::*;

#[test]
fn url_forms() {
    assert!(matches!(
        DatabaseUrl::parse("postgres://u:p@h/db"),
        Ok(DatabaseUrl::Postgres(_))
    ));
    assert!(matches!(
        DatabaseUrl::parse("postgresql://h/db"),
        Ok(DatabaseUrl::Postgres(_))
    ));
    match DatabaseUrl::parse("sqlite://./data/holdfast.db") {
        Ok(DatabaseUrl::Sqlite(p)) => assert_eq!(p, PathBuf::from("./data/holdfast.db")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        DatabaseUrl::parse("sqlite:x.db"),
        Ok(DatabaseUrl::Sqlite(_))
    ));
    for bad in ["mysql://u:secret@h/db", "sqlite://", "x.db", ""] {
        let err = DatabaseUrl::parse(bad).unwrap_err().to_string();
        assert!(!err.contains("secret"), "{err}");
    }
}

/// Committed payments survive power loss, not only a killed process: FULL is 2.
#[tokio::test]
async fn sqlite_commits_are_synced() {
    use diesel::sql_types::Integer;
    use diesel_async::RunQueryDsl;
    #[derive(diesel::QueryableByName)]
    struct Synchronous {
        #[diesel(sql_type = Integer)]
        synchronous: i32,
    }
    let dir = tempfile::tempdir().unwrap();
    let url = dir.path().join("t.db").to_string_lossy().into_owned();
    let mut conn = establish_sqlite(url).await.unwrap();
    let row: Synchronous = diesel::sql_query("PRAGMA synchronous")
        .get_result(&mut conn)
        .await
        .unwrap();
    assert_eq!(row.synchronous, 2);
}

#[test]
fn redacted_hides_credentials() {
    let url = DatabaseUrl::parse("postgres://u:hunter2@h/db").unwrap();
    assert!(!url.redacted().contains("hunter2"));
    assert!(!format!("{url:?}").contains("hunter2"));
}
