//! Why a configuration is refused: each error names the key, and where it was set.

use std::path::PathBuf;

use super::KEYS;

/// Why the configuration was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read config file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is not valid TOML.
    #[error("config file {path} is not valid TOML: {message}")]
    Syntax {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// A key Herald does not know.
    #[error("unknown setting `{key}` (from {origin}); known settings: {}", KEYS.join(", "))]
    UnknownKey {
        /// The key.
        key: String,
        /// Where it was set.
        origin: String,
    },
    /// A key with a bad value, or a value of the wrong type.
    #[error("bad value for `{key}`{}: {message}", from(origin.as_deref()))]
    Invalid {
        /// The key's path (`max_connections`, `archive.keyspace`).
        key: String,
        /// Where it was set (`config file herald.toml`, `environment variable HERALD_NAME`,
        /// `the command line`), when known.
        origin: Option<String>,
        /// What is wrong, quoting the value.
        message: String,
    },
}

/// A bad value of `key`; [`Origins::locate`](super::origin::Origins::locate) adds where it was
/// set.
pub(super) fn invalid(key: &str, message: String) -> ConfigError {
    ConfigError::Invalid {
        key: key.to_string(),
        origin: None,
        message,
    }
}

/// Says where a bad value came from, for [`ConfigError::Invalid`].
fn from(origin: Option<&str>) -> String {
    origin
        .map(|origin| format!(" (from {origin})"))
        .unwrap_or_default()
}
