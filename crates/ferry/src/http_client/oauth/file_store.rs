//! [`FileTokenStore`]: OAuth credentials on disk, one readable JSON file per
//! [`StoreKey`], private to the user.
//!
//! - The directory is created with mode `0700` (an existing one is used as it is).
//! - Each file is named by the hex SHA-256 of the key (`<64 hex>.json`): no part of a URL
//!   ever becomes a path.
//! - A file is written to a temporary file in the same directory, created with mode
//!   `0600` from the start (never widened, never chmod-ed after the secret is in it),
//!   flushed to disk, then renamed over the old one: a reader sees the old or the new
//!   credentials, never half of them, and concurrent writers (threads or processes) do
//!   not corrupt each other — the last rename wins.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use super::{OAuthFuture, StoreKey, StoredCredentials, TokenStore};

/// Temporary files of this process get distinct names.
static TEMPORARY: AtomicU64 = AtomicU64::new(0);

/// A [`TokenStore`] keeping each key's credentials in a JSON file of a directory (mode
/// `0700`, files `0600`, replaced atomically).
///
/// ```no_run
/// use ferry::http_client::oauth::FileTokenStore;
///
/// let store = match FileTokenStore::default_dir() {
///     Some(dir) => FileTokenStore::new(dir),
///     None => FileTokenStore::new("/tmp/ferry-tokens"),
/// };
/// println!("tokens in {}", store.dir().display());
/// ```
#[derive(Clone, Debug)]
pub struct FileTokenStore {
    dir: PathBuf,
}

/// The file's content: the key, for a person reading it, then the credentials.
#[derive(serde::Serialize, serde::Deserialize)]
struct Entry {
    issuer: String,
    resource: String,
    #[serde(flatten)]
    credentials: StoredCredentials,
}

impl FileTokenStore {
    /// A store in `dir`, created (mode `0700`, with missing parents) on the first save.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FileTokenStore { dir: dir.into() }
    }

    /// The usual directory: `$XDG_CONFIG_HOME/ferry/tokens`, else
    /// `$HOME/.config/ferry/tokens`; `None` when neither variable gives an absolute path.
    pub fn default_dir() -> Option<PathBuf> {
        tokens_dir(
            std::env::var_os("XDG_CONFIG_HOME"),
            std::env::var_os("HOME"),
        )
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding `key`'s credentials: `<hex SHA-256 of issuer and resource>.json`.
    pub fn path(&self, key: &StoreKey) -> PathBuf {
        let mut hash = Sha256::new();
        hash.update(key.issuer.as_bytes());
        // A byte no URL contains keeps ("ab", "c") and ("a", "bc") apart.
        hash.update([0u8]);
        hash.update(key.resource.as_bytes());
        let hex: String = hash
            .finalize()
            .iter()
            .map(|byte| format!("{byte:02x}"))
            .collect();
        self.dir.join(format!("{hex}.json"))
    }

    fn load_now(&self, key: &StoreKey) -> io::Result<Option<StoredCredentials>> {
        let path = self.path(key);
        let bytes = match std::fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let entry: Entry = serde_json::from_slice(&bytes).map_err(|e| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {e}", path.display()),
            )
        })?;
        if entry.issuer != key.issuer || entry.resource != key.resource {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: holds credentials for another issuer or resource",
                    path.display()
                ),
            ));
        }
        Ok(Some(entry.credentials))
    }

    fn save_now(&self, key: &StoreKey, value: &StoredCredentials) -> io::Result<()> {
        create_private_dir(&self.dir)?;
        let entry = Entry {
            issuer: key.issuer.clone(),
            resource: key.resource.clone(),
            credentials: value.clone(),
        };
        let mut json = serde_json::to_vec_pretty(&entry).map_err(io::Error::other)?;
        json.push(b'\n');
        let path = self.path(key);
        let temporary = self.dir.join(format!(
            ".{}.{}-{}.tmp",
            path.file_stem().and_then(|s| s.to_str()).unwrap_or("entry"),
            std::process::id(),
            TEMPORARY.fetch_add(1, Ordering::Relaxed),
        ));
        let written =
            write_private(&temporary, &json).and_then(|()| std::fs::rename(&temporary, &path));
        if written.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        written?;
        // Make the rename itself durable; not every platform can open a directory.
        if let Ok(dir) = std::fs::File::open(&self.dir) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    fn remove_now(&self, key: &StoreKey) -> io::Result<()> {
        match std::fs::remove_file(self.path(key)) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
            other => other,
        }
    }
}

/// `ferry/tokens` under the XDG configuration directory (`$XDG_CONFIG_HOME`, else
/// `$HOME/.config`); relative values are ignored.
fn tokens_dir(xdg_config_home: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let absolute = |value: Option<OsString>| value.map(PathBuf::from).filter(|p| p.is_absolute());
    let config = absolute(xdg_config_home).or_else(|| absolute(home).map(|h| h.join(".config")))?;
    Some(config.join("ferry").join("tokens"))
}

/// Create `dir` and its missing parents with mode `0700`.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Write `bytes` to the new file `path`, created with mode `0600`, and flush it to disk.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Run blocking file work off the async threads.
fn blocking<'a, T: Send + 'static>(
    work: impl FnOnce() -> io::Result<T> + Send + 'static,
) -> OAuthFuture<'a, io::Result<T>> {
    Box::pin(async move {
        tokio::task::spawn_blocking(work)
            .await
            .map_err(|e| io::Error::other(format!("the token store's file task failed: {e}")))?
    })
}

impl TokenStore for FileTokenStore {
    fn load<'a>(
        &'a self,
        key: &'a StoreKey,
    ) -> OAuthFuture<'a, io::Result<Option<StoredCredentials>>> {
        let (store, key) = (self.clone(), key.clone());
        blocking(move || store.load_now(&key))
    }

    fn save<'a>(
        &'a self,
        key: &'a StoreKey,
        value: &'a StoredCredentials,
    ) -> OAuthFuture<'a, io::Result<()>> {
        let (store, key, value) = (self.clone(), key.clone(), value.clone());
        blocking(move || store.save_now(&key, &value))
    }

    fn remove<'a>(&'a self, key: &'a StoreKey) -> OAuthFuture<'a, io::Result<()>> {
        let (store, key) = (self.clone(), key.clone());
        blocking(move || store.remove_now(&key))
    }
}

#[cfg(test)]
mod tests {
    use super::super::{ClientCredentials, TokenSet};
    use super::*;

    /// A fresh directory under the system's temporary one (removed when dropped).
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let dir = std::env::temp_dir()
                .join(format!("ferry-file-store-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&dir);
            Scratch(dir)
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn key(resource: &str) -> StoreKey {
        StoreKey {
            issuer: "http://127.0.0.1:9/issuer".into(),
            resource: resource.into(),
        }
    }

    fn credentials(n: u64) -> StoredCredentials {
        StoredCredentials {
            client: Some(ClientCredentials {
                client_id: format!("client-{n}"),
                client_secret: Some("s3cret".into()),
                token_endpoint_auth_method: Some("client_secret_basic".into()),
            }),
            tokens: Some(TokenSet {
                access_token: format!("access-{n}-{}", "x".repeat(2000)),
                token_type: "Bearer".into(),
                refresh_token: Some(format!("refresh-{n}")),
                expires_at: Some(1_700_000_000 + n),
                scope: Some("mcp:tools".into()),
                issued_at: Some(1_699_999_000),
            }),
        }
    }

    /// Names in `dir` (sorted).
    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[tokio::test]
    async fn the_directory_is_0700_and_the_files_0600() {
        let scratch = Scratch::new("modes");
        let dir = scratch.0.join("config").join("tokens");
        let store = FileTokenStore::new(&dir);
        store
            .save(&key("http://a/mcp"), &credentials(1))
            .await
            .unwrap();
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(
            mode(&scratch.0.join("config")),
            0o700,
            "created parents too"
        );
        let file = store.path(&key("http://a/mcp"));
        assert_eq!(mode(&file), 0o600);
        // Replaced, the file is still private.
        store
            .save(&key("http://a/mcp"), &credentials(2))
            .await
            .unwrap();
        assert_eq!(mode(&file), 0o600);
    }

    #[tokio::test]
    async fn credentials_round_trip_per_key_in_readable_json() {
        let scratch = Scratch::new("round-trip");
        let store = FileTokenStore::new(&scratch.0);
        let (a, b) = (key("http://a/mcp"), key("http://b/mcp"));
        assert_eq!(
            store.load(&a).await.unwrap(),
            None,
            "nothing yet, no directory"
        );
        store.save(&a, &credentials(1)).await.unwrap();
        assert_eq!(store.load(&a).await.unwrap(), Some(credentials(1)));
        assert_eq!(store.load(&b).await.unwrap(), None);
        store.save(&a, &StoredCredentials::default()).await.unwrap();
        assert_eq!(
            store.load(&a).await.unwrap(),
            Some(StoredCredentials::default())
        );
        store.save(&a, &credentials(3)).await.unwrap();

        let path = store.path(&a);
        let name = path.file_name().unwrap().to_str().unwrap();
        assert_eq!(name.len(), 64 + ".json".len(), "{name}");
        assert!(
            name.trim_end_matches(".json")
                .bytes()
                .all(|c| c.is_ascii_hexdigit())
        );
        assert_eq!(names(&scratch.0), [name], "no temporary file left");
        let json: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(json["issuer"], "http://127.0.0.1:9/issuer");
        assert_eq!(json["resource"], "http://a/mcp");
        assert_eq!(json["client"]["client_id"], "client-3");
        assert_eq!(json["tokens"]["refresh_token"], "refresh-3");
    }

    #[tokio::test]
    async fn remove_forgets_and_is_idempotent() {
        let scratch = Scratch::new("remove");
        let store = FileTokenStore::new(&scratch.0);
        let (a, b) = (key("http://a/mcp"), key("http://b/mcp"));
        store.remove(&a).await.unwrap();
        store.save(&a, &credentials(1)).await.unwrap();
        store.save(&b, &credentials(2)).await.unwrap();
        store.remove(&a).await.unwrap();
        assert_eq!(store.load(&a).await.unwrap(), None);
        assert_eq!(store.load(&b).await.unwrap(), Some(credentials(2)));
        store.remove(&a).await.unwrap();
    }

    #[tokio::test]
    async fn a_damaged_or_foreign_file_is_an_error_not_credentials() {
        let scratch = Scratch::new("damaged");
        let store = FileTokenStore::new(&scratch.0);
        let (a, b) = (key("http://a/mcp"), key("http://b/mcp"));
        store.save(&a, &credentials(1)).await.unwrap();
        std::fs::write(store.path(&a), b"{\"issuer\": ").unwrap();
        let error = store.load(&a).await.unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        // A file holding another key's credentials (copied by hand, say) is refused.
        store.save(&b, &credentials(2)).await.unwrap();
        std::fs::copy(store.path(&b), store.path(&a)).unwrap();
        let error = store.load(&a).await.unwrap_err();
        assert!(error.to_string().contains("another issuer"), "{error}");
    }

    #[test]
    fn concurrent_saves_never_corrupt_the_file() {
        let scratch = Scratch::new("concurrent");
        let store = FileTokenStore::new(&scratch.0);
        let a = key("http://a/mcp");
        let (writers, rounds) = (6u64, 20u64);
        std::thread::scope(|scope| {
            for writer in 0..writers {
                let (store, a) = (&store, &a);
                scope.spawn(move || {
                    for round in 0..rounds {
                        store
                            .save_now(a, &credentials(writer * 1000 + round))
                            .unwrap();
                    }
                });
            }
            // A reader meanwhile sees nothing yet or one complete value, never a torn one.
            scope.spawn(|| {
                for _ in 0..200 {
                    if let Some(read) = store.load_now(&a).unwrap() {
                        let n = read.tokens.unwrap().expires_at.unwrap() - 1_700_000_000;
                        assert_eq!(read.client.unwrap().client_id, format!("client-{n}"));
                    }
                }
            });
        });
        let last = store.load_now(&a).unwrap().expect("saved");
        let n = last.tokens.as_ref().unwrap().expires_at.unwrap() - 1_700_000_000;
        assert_eq!(last, credentials(n));
        assert!(n % 1000 < rounds && n / 1000 < writers);
        assert_eq!(names(&scratch.0).len(), 1, "no temporary file left");
    }

    #[test]
    fn the_default_directory_is_under_the_user_configuration() {
        let some = |s: &str| Some(std::ffi::OsString::from(s));
        assert_eq!(
            tokens_dir(some("/x/config"), some("/home/u")),
            Some(PathBuf::from("/x/config/ferry/tokens"))
        );
        assert_eq!(
            tokens_dir(some("relative"), some("/home/u")),
            Some(PathBuf::from("/home/u/.config/ferry/tokens")),
            "a relative XDG_CONFIG_HOME is ignored, as the XDG spec says"
        );
        assert_eq!(
            tokens_dir(None, some("/home/u")),
            Some(PathBuf::from("/home/u/.config/ferry/tokens"))
        );
        assert_eq!(tokens_dir(None, some("")), None);
        assert_eq!(tokens_dir(None, None), None);
    }
}
