use super::*;

fn drop_in(dir: &tempfile::TempDir) -> DirectoryDrop {
    let (outbox, inbox) = (dir.path().join("out"), dir.path().join("in"));
    fs::create_dir(&outbox).unwrap();
    fs::create_dir(&inbox).unwrap();
    DirectoryDrop::new(outbox, inbox).unwrap()
}

#[tokio::test]
async fn a_sent_file_is_in_the_outbox_whole_and_nothing_else_is() {
    let dir = tempfile::tempdir().unwrap();
    let bank = drop_in(&dir);
    bank.send("achf_1.ach", "101 records\n").await.unwrap();
    bank.send("achf_1.ach", "101 records\n").await.unwrap();
    let names: Vec<String> = fs::read_dir(dir.path().join("out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|name| !name.starts_with('.'))
        .collect();
    assert_eq!(names, ["achf_1.ach"]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = fs::metadata(dir.path().join("out/achf_1.ach"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(
            mode & 0o777,
            0o600,
            "its owner's only: it holds account numbers"
        );
    }
    assert_eq!(
        fs::read_to_string(dir.path().join("out/achf_1.ach")).unwrap(),
        "101 records\n"
    );
}

/// A file the transfer took away is never put back: sent again after a stop kept the database
/// from knowing, it is not written a second time.
#[tokio::test]
async fn a_file_put_once_is_never_put_again() {
    let dir = tempfile::tempdir().unwrap();
    let bank = drop_in(&dir);
    bank.send("achf_1.ach", "101 records\n").await.unwrap();
    fs::remove_file(dir.path().join("out/achf_1.ach")).unwrap();
    bank.send("achf_1.ach", "101 records\n").await.unwrap();
    assert!(!dir.path().join("out/achf_1.ach").exists());
    // A stop between the marker and the rename: the whole temporary file is finished.
    fs::write(dir.path().join("out/.sent/achf_2.ach"), "").unwrap();
    fs::write(dir.path().join("out/.achf_2.ach.tmp"), "101 two\n").unwrap();
    bank.send("achf_2.ach", "101 two\n").await.unwrap();
    assert_eq!(
        fs::read_to_string(dir.path().join("out/achf_2.ach")).unwrap(),
        "101 two\n"
    );
}

#[tokio::test]
async fn names_that_could_leave_the_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let bank = drop_in(&dir);
    for name in ["../x.ach", "a/b", ".hidden", "", "x y", "\u{e9}.ach"] {
        assert!(bank.send(name, "x").await.is_err(), "{name:?}");
        assert!(bank.returns_done(name, true).await.is_err(), "{name:?}");
    }
    assert_eq!(
        fs::read_dir(dir.path().join("out")).unwrap().count(),
        1,
        "only .sent"
    );
}

#[tokio::test]
async fn returns_are_read_and_set_aside_without_writing_over() {
    let dir = tempfile::tempdir().unwrap();
    let bank = drop_in(&dir);
    let inbox = dir.path().join("in");
    fs::write(inbox.join("returns.ach"), "first").unwrap();
    fs::write(inbox.join(".partial"), "being written").unwrap();
    fs::create_dir(inbox.join("subdir")).unwrap();
    let waiting = bank.waiting_returns().await.unwrap();
    assert_eq!(
        waiting,
        [ReturnFile {
            name: "returns.ach".into(),
            text: "first".into()
        }]
    );
    bank.returns_done("returns.ach", true).await.unwrap();
    fs::write(inbox.join("returns.ach"), "second").unwrap();
    bank.returns_done("returns.ach", true).await.unwrap();
    fs::write(inbox.join("garbage"), "x").unwrap();
    bank.returns_done("garbage", false).await.unwrap();
    assert_eq!(
        fs::read_to_string(inbox.join("read/returns.ach")).unwrap(),
        "first"
    );
    assert_eq!(
        fs::read_to_string(inbox.join("read/returns.ach.1")).unwrap(),
        "second"
    );
    assert_eq!(
        fs::read_to_string(inbox.join("refused/garbage")).unwrap(),
        "x"
    );
    let left: Vec<_> = bank.waiting_returns().await.unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn directories_that_are_not_there_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope");
    let err = DirectoryDrop::new(missing.clone(), dir.path().to_owned()).unwrap_err();
    assert!(err.contains("outbox"), "{err}");
}
