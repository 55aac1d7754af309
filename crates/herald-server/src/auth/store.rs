//! The identities file (`identities.toml` in the data directory unless the configuration
//! names another): each identity's name, its permissions and a SHA-256 hash of its secret.
//! The secret itself is shown once, by `herald token new`, and never stored.
//!
//! ```toml
//! [[identity]]
//! name = "daq"
//! hash = "sha256:6f1c…"
//! created = "2026-11-26T12:00:00.000Z"
//! publish = ["DAQ.*"]
//! subscribe = ["*"]
//! deny_subscribe = ["Safety.*"]
//! info_read = ["*"]
//! info_write = ["DAQ.*"]
//! query = true
//! admin = false
//! ```

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use herald_router::GlobRules;
use ring::digest;
use ring::rand::{SecureRandom, SystemRandom};
use serde::{Deserialize, Serialize};

use super::{Identity, Permissions};

/// The file's name in the data directory.
pub const FILE_NAME: &str = "identities.toml";
/// Random bytes in a secret (256 bits).
const SECRET_BYTES: usize = 32;
/// What every secret starts with, so that one pasted into a log or a ticket is recognised.
pub const SECRET_PREFIX: &str = "hrd_";

/// Why the identities file could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Reading or writing the file failed.
    #[error("{what} {}: {source}", path.display())]
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The file is not a valid identities file.
    #[error("{}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// What is wrong, naming the identity.
        message: String,
    },
    /// `herald token new` for a name that exists.
    #[error("an identity named `{0}` exists; revoke it first (`herald token revoke {0}`)")]
    Exists(String),
    /// `herald token revoke` for a name that does not.
    #[error("no identity named `{name}` in {}", path.display())]
    NotFound {
        /// The name asked for.
        name: String,
        /// The file.
        path: PathBuf,
    },
    /// A bad name or pattern given to `herald token new`.
    #[error("{0}")]
    Bad(String),
}

/// One identity as the file keeps it.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// `sha256:` and the hex SHA-256 of its secret.
    #[serde(default)]
    pub hash: String,
    /// When it was made (ISO 8601, UTC).
    #[serde(default)]
    pub created: String,
    /// Subject globs it may publish about.
    #[serde(default)]
    pub publish: Vec<String>,
    /// Subject globs it may not publish about.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_publish: Vec<String>,
    /// Subject globs it may receive.
    #[serde(default)]
    pub subscribe: Vec<String>,
    /// Subject globs it may not receive.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_subscribe: Vec<String>,
    /// Object-name globs it may read.
    #[serde(default)]
    pub info_read: Vec<String>,
    /// Object-name globs it may not read.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_info_read: Vec<String>,
    /// Object-name globs it may write.
    #[serde(default)]
    pub info_write: Vec<String>,
    /// Object-name globs it may not write.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub deny_info_write: Vec<String>,
    /// Archive queries.
    #[serde(default)]
    pub query: bool,
    /// Administration.
    #[serde(default)]
    pub admin: bool,
}

impl Entry {
    /// Compiles the permissions.
    ///
    /// # Errors
    /// A message naming the identity, the permission and the bad pattern.
    pub fn permissions(&self) -> Result<Permissions, String> {
        let rules = |what: &str, allow: &[String], deny: &[String]| {
            GlobRules::new(allow, deny).map_err(|(pattern, err)| {
                format!(
                    "identity `{}`: {what} pattern `{pattern}`: {err}",
                    self.name
                )
            })
        };
        Ok(Permissions {
            publish: rules("publish", &self.publish, &self.deny_publish)?,
            subscribe: rules("subscribe", &self.subscribe, &self.deny_subscribe)?,
            info_read: rules("info-read", &self.info_read, &self.deny_info_read)?,
            info_write: rules("info-write", &self.info_write, &self.deny_info_write)?,
            query: self.query,
            admin: self.admin,
        })
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default, rename = "identity")]
    identities: Vec<Entry>,
}

/// The identities a server knows, by the hash of their secrets.
#[derive(Debug, Default)]
pub struct Identities {
    by_hash: HashMap<[u8; 32], Arc<Identity>>,
}

impl Identities {
    /// Reads `path`; a missing file holds no identities.
    ///
    /// # Errors
    /// [`StoreError`] naming the file and what is wrong in it.
    pub fn load(path: &Path) -> Result<Identities, StoreError> {
        let mut by_hash = HashMap::new();
        for entry in read(path)?.identities {
            let invalid = |message: String| StoreError::Invalid {
                path: path.to_path_buf(),
                message,
            };
            let hash = parse_hash(&entry.hash).ok_or_else(|| {
                invalid(format!(
                    "identity `{}`: hash `{}` is not `sha256:` and 64 hex digits",
                    entry.name, entry.hash
                ))
            })?;
            let permissions = entry.permissions().map_err(invalid)?;
            let identity = Identity {
                name: entry.name,
                permissions,
                hash,
            };
            by_hash.insert(hash, Arc::new(identity));
        }
        Ok(Identities { by_hash })
    }

    /// Returns true if there is no identity (the server is open).
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }

    /// Returns the number of identities.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// The identity whose secret is `token`.
    pub fn authenticate(&self, token: &str) -> Option<Arc<Identity>> {
        self.by_hash.get(&sha256(token)).cloned()
    }

    /// The identity called `name`: the one a verified client certificate naming it acts as.
    pub fn by_name(&self, name: &str) -> Option<Arc<Identity>> {
        self.by_hash.values().find(|i| i.name == name).cloned()
    }

    /// Returns true if `identity` is still here as it was: same token, name and permissions
    /// (not revoked, replaced or changed).
    pub fn still_grants(&self, identity: &Identity) -> bool {
        self.by_hash
            .get(&identity.hash)
            .is_some_and(|known| **known == *identity)
    }
}

/// Returns the identities file for `data_dir`.
pub fn default_path(data_dir: &Path) -> PathBuf {
    data_dir.join(FILE_NAME)
}

/// The entries of `path` (none if it does not exist), for `herald token ls`.
///
/// # Errors
/// [`StoreError`].
pub fn list(path: &Path) -> Result<Vec<Entry>, StoreError> {
    Ok(read(path)?.identities)
}

/// Adds `entry` (its hash and time are set here) and returns its secret, shown once.
///
/// # Errors
/// [`StoreError`]: a bad name or pattern, a name in use, or the file.
pub fn add(path: &Path, mut entry: Entry) -> Result<String, StoreError> {
    check_name(&entry.name)?;
    entry.permissions().map_err(StoreError::Bad)?;
    let _lock = lock(path)?;
    let mut file = read(path)?;
    if file.identities.iter().any(|e| e.name == entry.name) {
        return Err(StoreError::Exists(entry.name));
    }
    let secret = new_secret();
    entry.hash = format!("sha256:{}", hex(&sha256(&secret)));
    entry.created = herald_proto::time::format_iso8601(herald_proto::time::now_nanos());
    file.identities.push(entry);
    write(path, &file)?;
    Ok(secret)
}

/// Removes the identity named `name`.
///
/// # Errors
/// [`StoreError::NotFound`] if there is none, or the file's.
pub fn revoke(path: &Path, name: &str) -> Result<(), StoreError> {
    let _lock = lock(path)?;
    let mut file = read(path)?;
    let before = file.identities.len();
    file.identities.retain(|e| e.name != name);
    if file.identities.len() == before {
        return Err(StoreError::NotFound {
            name: name.to_string(),
            path: path.to_path_buf(),
        });
    }
    write(path, &file)
}

fn check_name(name: &str) -> Result<(), StoreError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '@'));
    if ok {
        return Ok(());
    }
    Err(StoreError::Bad(format!(
        "identity name `{}`: use 1 to 64 letters, digits, `-`, `_`, `.` or `@`",
        name.escape_debug()
    )))
}

fn read(path: &Path) -> Result<File, StoreError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(File::default()),
        Err(source) => {
            return Err(StoreError::Io {
                what: "reading",
                path: path.to_path_buf(),
                source,
            })
        }
    };
    let file: File = toml::from_str(&text).map_err(|err| StoreError::Invalid {
        path: path.to_path_buf(),
        message: err.message().to_string(),
    })?;
    let mut seen = std::collections::HashSet::new();
    for entry in &file.identities {
        if !seen.insert(entry.name.as_str()) {
            return Err(StoreError::Invalid {
                path: path.to_path_buf(),
                message: format!("identity `{}` appears twice", entry.name),
            });
        }
    }
    Ok(file)
}

/// Takes the exclusive lock of `path`'s lock file (`identities.toml.lock` beside it), so
/// that two `herald token` runs change the file one after the other, each seeing the other's
/// change. Released when the returned file is dropped.
fn lock(path: &Path) -> Result<std::fs::File, StoreError> {
    let io = |what: &'static str| {
        move |source| StoreError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    };
    std::fs::create_dir_all(directory(path)).map_err(io("creating the directory of"))?;
    let mut name = path.as_os_str().to_owned();
    name.push(".lock");
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(PathBuf::from(name))
        .map_err(io("locking"))?;
    file.lock().map_err(io("locking"))?;
    Ok(file)
}

fn directory(path: &Path) -> PathBuf {
    match path.parent().filter(|p| !p.as_os_str().is_empty()) {
        Some(parent) => parent.to_path_buf(),
        None => PathBuf::from("."),
    }
}

/// Writes `file` to a new temporary file beside `path` (created readable by its owner only,
/// removed on error) and renames it over `path`: a server reading at the same time sees the
/// old file or the new one, never half of one.
fn write(path: &Path, file: &File) -> Result<(), StoreError> {
    let io = |what: &'static str| {
        move |source| StoreError::Io {
            what,
            path: path.to_path_buf(),
            source,
        }
    };
    let text = format!(
        "# Herald identities, written by `herald token`. Only a SHA-256 hash of each secret \
         is kept.\n\n{}",
        toml::to_string_pretty(file).expect("identities serialize")
    );
    // tempfile creates the file with mode 0600 and O_EXCL, and deletes it if dropped.
    let mut temporary = tempfile::NamedTempFile::new_in(directory(path)).map_err(io("writing"))?;
    temporary
        .write_all(text.as_bytes())
        .and_then(|()| temporary.as_file().sync_all())
        .map_err(io("writing"))?;
    temporary
        .persist(path)
        .map_err(|err| io("replacing")(err.error))?;
    Ok(())
}

/// A new secret: [`SECRET_PREFIX`] and 256 random bits, base64url without padding.
fn new_secret() -> String {
    let mut bytes = [0u8; SECRET_BYTES];
    SystemRandom::new()
        .fill(&mut bytes)
        .expect("the operating system's random source");
    format!("{SECRET_PREFIX}{}", base64url(&bytes))
}

fn sha256(text: &str) -> [u8; 32] {
    let digest = digest::digest(&digest::SHA256, text.as_bytes());
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

fn parse_hash(text: &str) -> Option<[u8; 32]> {
    let hex_digits = text.strip_prefix("sha256:")?;
    if hex_digits.len() != 64 || !hex_digits.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&hex_digits[2 * i..2 * i + 2], 16).ok()?;
    }
    Some(out)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        let symbols = chunk.len() + 1;
        for i in 0..symbols {
            out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daq() -> Entry {
        Entry {
            name: "daq".to_string(),
            publish: vec!["DAQ.*".to_string()],
            subscribe: vec!["*".to_string()],
            ..Entry::default()
        }
    }

    #[test]
    fn a_secret_authenticates_its_identity_and_only_its_hash_is_stored() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let secret = add(&path, daq()).unwrap();
        assert!(secret.starts_with(SECRET_PREFIX));
        assert_eq!(secret.len(), SECRET_PREFIX.len() + 43);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains(&secret[SECRET_PREFIX.len()..]));
        assert!(text.contains("sha256:"));
        let identities = Identities::load(&path).unwrap();
        let found = identities.authenticate(&secret).expect("the identity");
        assert_eq!(found.name, "daq");
        assert!(found.permissions.publish.allows("DAQ.x"));
        assert!(identities.authenticate("hrd_wrong").is_none());
        assert!(identities.authenticate("").is_none());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[test]
    fn two_secrets_differ_and_revoking_forgets_the_identity() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let first = add(&path, daq()).unwrap();
        assert!(matches!(add(&path, daq()), Err(StoreError::Exists(_))));
        let other = add(
            &path,
            Entry {
                name: "ops".to_string(),
                ..daq()
            },
        )
        .unwrap();
        assert_ne!(first, other);
        revoke(&path, "daq").unwrap();
        let identities = Identities::load(&path).unwrap();
        assert!(identities.authenticate(&first).is_none());
        assert!(identities.authenticate(&other).is_some());
        let err = revoke(&path, "daq").unwrap_err().to_string();
        assert!(err.contains("no identity named `daq`"), "{err}");
    }

    #[test]
    fn bad_names_patterns_and_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(FILE_NAME);
        let bad_name = Entry {
            name: "a b".to_string(),
            ..daq()
        };
        assert!(add(&path, bad_name)
            .unwrap_err()
            .to_string()
            .contains("`a b`"));
        let bad_glob = Entry {
            publish: vec![String::new()],
            ..daq()
        };
        let err = add(&path, bad_glob).unwrap_err().to_string();
        assert!(err.contains("publish pattern"), "{err}");
        std::fs::write(&path, "[[identity]]\nname = \"x\"\nhash = \"md5:1\"\n").unwrap();
        let err = Identities::load(&path).unwrap_err().to_string();
        assert!(err.contains("identity `x`: hash"), "{err}");
        std::fs::write(&path, "[[identity]]\nname = \"x\"\ncolour = 1\n").unwrap();
        let err = Identities::load(&path).unwrap_err().to_string();
        assert!(err.contains("colour"), "{err}");
        assert!(Identities::load(&dir.path().join("none.toml"))
            .unwrap()
            .is_empty());
    }

    #[test]
    fn base64url_matches_the_rfc_examples() {
        assert_eq!(base64url(b"f"), "Zg");
        assert_eq!(base64url(b"fo"), "Zm8");
        assert_eq!(base64url(b"foo"), "Zm9v");
        assert_eq!(base64url(b"foob"), "Zm9vYg");
        assert_eq!(base64url(&[0xfb, 0xff]), "-_8");
    }
}
