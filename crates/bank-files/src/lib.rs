#![doc = include_str!("../README.md")]
// No input may stop the server (issue 37): what could panic is refused outside tests.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::arithmetic_side_effects
    )
)]

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use holdfast_domain::ports::{BankDrop, ReturnFile, StoreError};

/// The largest return file read: a day's returns of a large platform are far smaller.
const MAX_RETURN_FILE: u64 = 64 * 1024 * 1024;

/// Where read return files go, under the inbox.
const READ: &str = "read";

/// Where return files that could not be read go, under the inbox.
const REFUSED: &str = "refused";

/// The outbox and the inbox.
#[derive(Debug, Clone)]
pub struct DirectoryDrop {
    outbox: PathBuf,
    inbox: PathBuf,
}

impl DirectoryDrop {
    /// The drop over two directories, which must exist (the operator's transfer reads and
    /// writes them too); `inbox/read` and `inbox/refused` are made if missing.
    pub fn new(outbox: PathBuf, inbox: PathBuf) -> Result<Self, String> {
        for (name, dir) in [("outbox", &outbox), ("inbox", &inbox)] {
            if !dir.is_dir() {
                return Err(format!("the {name} {} is not a directory", dir.display()));
            }
        }
        for made in [inbox.join(READ), inbox.join(REFUSED), outbox.join(SENT)] {
            fs::create_dir_all(&made).map_err(|e| format!("{}: {e}", made.display()))?;
        }
        Ok(Self { outbox, inbox })
    }
}

/// A file name the drop writes or moves: letters, digits, `_`, `-` and `.`, not leading.
fn plain_name(name: &str) -> Result<&str, StoreError> {
    let plain = !name.is_empty()
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b));
    if plain {
        Ok(name)
    } else {
        Err(StoreError::Unexpected("not a plain file name".into()))
    }
}

fn failed(path: &Path, e: &std::io::Error) -> StoreError {
    StoreError::Unexpected(format!("{}: {e}", path.display()))
}

/// Where the outbox keeps a marker of each file ever put there, so that none is put twice.
const SENT: &str = ".sent";

/// Writes `text` to `dir/name` whole, readable by its owner only (it holds account numbers):
/// a temporary name, flushed; a marker that it was put; renamed; the directory flushed. A
/// file put before is never written again, even if a stop kept the database from knowing:
/// the transfer may have taken it to the bank already. (A stop between the marker and the
/// rename left the whole temporary file: the rename is finished.)
fn put(dir: &Path, name: &str, text: &str) -> Result<(), StoreError> {
    let name = plain_name(name)?;
    let temporary = dir.join(format!(".{name}.tmp"));
    let target = dir.join(name);
    let marker = dir.join(SENT).join(name);
    if marker.exists() {
        if temporary.exists() {
            fs::rename(&temporary, &target).map_err(|e| failed(&target, &e))?;
            sync_dir(dir)?;
        }
        return Ok(());
    }
    if let Err(e) = write_private(&temporary, text) {
        let _ = fs::remove_file(&temporary);
        return Err(e);
    }
    File::create(&marker)
        .and_then(|m| m.sync_all())
        .map_err(|e| failed(&marker, &e))?;
    sync_dir(&dir.join(SENT))?;
    fs::rename(&temporary, &target).map_err(|e| failed(&target, &e))?;
    sync_dir(dir)
}

/// `text` in a new file at `path` that only its owner reads, flushed to disk.
fn write_private(path: &Path, text: &str) -> Result<(), StoreError> {
    let mut options = fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path).map_err(|e| failed(path, &e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| failed(path, &e))
}

fn sync_dir(dir: &Path) -> Result<(), StoreError> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| failed(dir, &e))
}

/// The inbox's waiting files, oldest first (then by name).
fn waiting(inbox: &Path) -> Result<Vec<ReturnFile>, StoreError> {
    let mut found = Vec::new();
    for entry in fs::read_dir(inbox).map_err(|e| failed(inbox, &e))? {
        let entry = entry.map_err(|e| failed(inbox, &e))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        let Ok(meta) = entry.metadata() else { continue };
        if name.starts_with('.') || !meta.is_file() {
            continue;
        }
        if plain_name(&name).is_err() {
            tracing::warn!(
                inbox = %inbox.display(),
                "a file whose name is not letters, digits, _, - and . is left unread"
            );
            continue;
        }
        found.push((meta.modified().unwrap_or(SystemTime::UNIX_EPOCH), name));
    }
    found.sort();
    let mut files = Vec::with_capacity(found.len());
    for (_, name) in found {
        let path = inbox.join(&name);
        let mut bytes = Vec::new();
        match File::open(&path).and_then(|f| f.take(MAX_RETURN_FILE + 1).read_to_end(&mut bytes)) {
            Ok(_) => {}
            // Another process's run set it aside after the listing: it is not waiting any more.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(failed(&path, &e)),
        }
        // Too large, or not text: the reader refuses it by its first bad line.
        let text = if u64::try_from(bytes.len()).unwrap_or(u64::MAX) > MAX_RETURN_FILE {
            String::from("\u{0}")
        } else {
            String::from_utf8_lossy(&bytes).into_owned()
        };
        files.push(ReturnFile { name, text });
    }
    Ok(files)
}

/// Moves `inbox/name` into `inbox/under/`, under a free name.
fn set_aside(inbox: &Path, name: &str, under: &str) -> Result<(), StoreError> {
    let name = plain_name(name)?;
    let from = inbox.join(name);
    let dir = inbox.join(under);
    let mut to = dir.join(name);
    let mut n = 1_u32;
    while to.exists() {
        to = dir.join(format!("{name}.{n}"));
        n = n.saturating_add(1);
    }
    match fs::rename(&from, &to) {
        // Another process's run set it aside first: it is out of the inbox all the same.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        done => done.map_err(|e| failed(&from, &e)),
    }
}

async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StoreError::Unexpected(format!("bank files: {e}")))?
}

#[async_trait::async_trait]
impl BankDrop for DirectoryDrop {
    async fn send(&self, name: &str, text: &str) -> Result<(), StoreError> {
        let (dir, name, text) = (self.outbox.clone(), name.to_owned(), text.to_owned());
        blocking(move || put(&dir, &name, &text)).await
    }

    async fn waiting_returns(&self) -> Result<Vec<ReturnFile>, StoreError> {
        let inbox = self.inbox.clone();
        blocking(move || waiting(&inbox)).await
    }

    async fn returns_done(&self, name: &str, read: bool) -> Result<(), StoreError> {
        let (inbox, name) = (self.inbox.clone(), name.to_owned());
        let under = if read { READ } else { REFUSED };
        blocking(move || set_aside(&inbox, &name, under)).await
    }
}

#[cfg(test)]
mod tests;
