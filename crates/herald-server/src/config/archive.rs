//! The `[archive]` section: which store, how it syncs and buffers, and the rules of what is
//! kept for how long (`[[archive.rules]]`). `HERALD_ARCHIVE_<KEY>` sets a key of the section.

use std::path::Path;
use std::time::Duration;

use herald_archive::{ArchiveOptions, FsyncPolicy, Keep, Rule, Rules};
use herald_proto::{Glob, KindSet, PrioritySet};
use serde::Deserialize;

use super::{bytes, duration, invalid, positive, ConfigError, Quantity};

/// Keys of the `[archive]` section.
pub const ARCHIVE_KEYS: [&str; 11] = [
    "backend",
    "contact_points",
    "keyspace",
    "replication_factor",
    "fsync",
    "fsync_interval",
    "buffer_records",
    "buffer_bytes",
    "expire_interval",
    "spill_bytes",
    "rules",
];

/// Default keyspace of the Cassandra store.
pub const DEFAULT_KEYSPACE: &str = "herald";
/// Default contact point of the Cassandra store.
pub const DEFAULT_CONTACT_POINT: &str = "127.0.0.1:9042";

/// The `[archive]` section as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawArchiveConfig {
    /// `embedded` (default), `cassandra` or `none`.
    pub backend: Option<String>,
    /// Cassandra nodes, `host:port`.
    pub contact_points: Option<Vec<String>>,
    /// Cassandra keyspace.
    pub keyspace: Option<String>,
    /// Replication factor used when the keyspace is created.
    pub replication_factor: Option<u64>,
    /// `stored` (default), `always` or `interval`.
    pub fsync: Option<String>,
    /// How often writes no one waits on are synced.
    pub fsync_interval: Option<Quantity>,
    /// Buffer bound in records.
    pub buffer_records: Option<u64>,
    /// Buffer bound in bytes.
    pub buffer_bytes: Option<Quantity>,
    /// How often expired days are dropped.
    pub expire_interval: Option<Quantity>,
    /// Bytes the spill files (embedded store) may hold.
    pub spill_bytes: Option<Quantity>,
    /// What to archive; the defaults when absent.
    pub rules: Option<Vec<RawRule>>,
}

/// One `[[archive.rules]]` entry as written.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    /// `log`, `message`, `info`, a list such as `log,info`, or `*` (default).
    pub kinds: Option<String>,
    /// Subject glob (default `*`).
    pub subject: Option<String>,
    /// Priority set such as `>=INFO` (default: all).
    pub priority: Option<String>,
    /// Type glob (default `*`).
    #[serde(rename = "type")]
    pub type_name: Option<String>,
    /// Retention such as `30d` (required).
    pub keep: Option<String>,
}

/// Where the archive keeps its data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveBackendConfig {
    /// No archive: nothing is kept, `stored` acknowledgements are refused.
    None,
    /// The block store: segment files under `<data_dir>/segments` (the default).
    Embedded,
    /// The SQLite store of earlier versions, under `<data_dir>/archive`.
    Sqlite,
    /// Apache Cassandra or ScyllaDB.
    Cassandra {
        /// Nodes to contact first.
        contact_points: Vec<String>,
        /// Keyspace (created if missing).
        keyspace: String,
        /// Replication factor for a keyspace it creates.
        replication_factor: u32,
    },
}

/// The validated `[archive]` section.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveConfig {
    /// The store.
    pub backend: ArchiveBackendConfig,
    /// Rules, buffer, sync.
    pub options: ArchiveOptions,
}

impl ArchiveConfig {
    /// Returns the directory of the embedded block store under `data_dir`.
    pub fn embedded_dir(data_dir: &Path) -> std::path::PathBuf {
        data_dir.join("segments")
    }

    /// Returns the directory of the SQLite store (`backend = "sqlite"`, and the archive of
    /// versions before the block store) under `data_dir`.
    pub fn sqlite_dir(data_dir: &Path) -> std::path::PathBuf {
        data_dir.join("archive")
    }
}

/// Validates the section.
///
/// # Errors
/// [`ConfigError::Invalid`] naming the key (`archive.keep`, `archive.rules[2].priority`…).
pub fn from_raw(raw: Option<RawArchiveConfig>) -> Result<ArchiveConfig, ConfigError> {
    let raw = raw.unwrap_or_default();
    let defaults = ArchiveOptions::default();
    let backend_name = raw.backend.as_deref().unwrap_or("embedded");
    let cassandra_only = [
        ("contact_points", raw.contact_points.is_some()),
        ("keyspace", raw.keyspace.is_some()),
        ("replication_factor", raw.replication_factor.is_some()),
    ];
    if let Some((key, _)) = cassandra_only.iter().find(|(_, given)| *given) {
        if !matches!(backend_name, "cassandra" | "scylla" | "cql") {
            // Taken and ignored, it would leave a forgotten `backend` line unnoticed.
            return Err(invalid(
                &format!("archive.{key}"),
                format!(
                    "set, but `archive.backend` is `{backend_name}`: contact_points, keyspace \
                     and replication_factor are for backend = \"cassandra\""
                ),
            ));
        }
    }
    let backend = match backend_name {
        "embedded" => ArchiveBackendConfig::Embedded,
        "sqlite" => ArchiveBackendConfig::Sqlite,
        "none" => ArchiveBackendConfig::None,
        "cassandra" | "scylla" | "cql" => ArchiveBackendConfig::Cassandra {
            contact_points: raw
                .contact_points
                .unwrap_or_else(|| vec![DEFAULT_CONTACT_POINT.to_string()]),
            keyspace: keyspace(raw.keyspace)?,
            replication_factor: positive("archive.replication_factor", raw.replication_factor, 1)?
                .min(u64::from(u32::MAX)) as u32,
        },
        other => {
            return Err(invalid(
                "archive.backend",
                format!("`{other}` (expected embedded, sqlite, cassandra or none)"),
            ))
        }
    };
    let fsync = match raw.fsync.as_deref().unwrap_or("stored") {
        "stored" => FsyncPolicy::Stored,
        "always" => FsyncPolicy::Always,
        "interval" => FsyncPolicy::Interval,
        other => {
            return Err(invalid(
                "archive.fsync",
                format!("`{other}` (expected stored, always or interval)"),
            ))
        }
    };
    let millis = |d: Duration| d.as_millis() as u64;
    let options = ArchiveOptions {
        rules: match raw.rules {
            None => Rules::default(),
            Some(rules) => Rules::new(
                rules
                    .into_iter()
                    .enumerate()
                    .map(|(index, rule)| parse_rule(index, rule))
                    .collect::<Result<_, _>>()?,
            ),
        },
        buffer_records: positive(
            "archive.buffer_records",
            raw.buffer_records,
            defaults.buffer_records as u64,
        )? as usize,
        buffer_bytes: bytes(
            "archive.buffer_bytes",
            raw.buffer_bytes,
            defaults.buffer_bytes as u64,
        )? as usize,
        fsync,
        fsync_interval: duration(
            "archive.fsync_interval",
            raw.fsync_interval,
            millis(defaults.fsync_interval),
        )?,
        expire_interval: duration(
            "archive.expire_interval",
            raw.expire_interval,
            millis(defaults.expire_interval),
        )?,
        spill_bytes: bytes("archive.spill_bytes", raw.spill_bytes, defaults.spill_bytes)?,
        ..defaults
    };
    Ok(ArchiveConfig { backend, options })
}

fn keyspace(text: Option<String>) -> Result<String, ConfigError> {
    let name = text.unwrap_or_else(|| DEFAULT_KEYSPACE.to_string());
    let valid = !name.is_empty()
        && name.len() <= 48
        && name.starts_with(|c: char| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    match valid {
        true => Ok(name),
        false => Err(invalid(
            "archive.keyspace",
            format!("`{name}` (letters, digits and `_`, starting with a letter, at most 48)"),
        )),
    }
}

fn parse_rule(index: usize, raw: RawRule) -> Result<Rule, ConfigError> {
    let bad = |field: &str, message: String| {
        invalid(
            "archive.rules",
            format!("rule {} `{field}`: {message}", index + 1),
        )
    };
    let keep: Keep = raw
        .keep
        .ok_or_else(|| bad("keep", "missing (e.g. keep = \"30d\")".to_string()))?
        .parse()
        .map_err(|message| bad("keep", message))?;
    let glob = |field: &str, text: Option<String>| match text {
        None => Ok(Glob::any()),
        Some(text) => Glob::new(&text).map_err(|err| bad(field, err.to_string())),
    };
    Ok(Rule {
        kinds: match raw.kinds {
            None => KindSet::ALL,
            Some(text) => text
                .parse()
                .map_err(|err: herald_proto::kind::KindError| bad("kinds", err.to_string()))?,
        },
        subject: glob("subject", raw.subject)?,
        priorities: match raw.priority {
            None => PrioritySet::ALL,
            Some(text) => text
                .parse()
                .map_err(|err: herald_proto::PriorityError| bad("priority", err.to_string()))?,
        },
        type_name: glob("type", raw.type_name)?,
        keep,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_parse_and_bad_ones_are_named() {
        let text = r#"
            backend = "cassandra"
            keyspace = "site_a"
            [[rules]]
            kinds = "log"
            priority = ">=ERROR"
            keep = "365d"
            [[rules]]
            subject = "ANTENNA.*"
            keep = "7d"
        "#;
        let raw: RawArchiveConfig = toml::from_str(text).unwrap();
        let config = from_raw(Some(raw)).unwrap();
        assert_eq!(config.options.rules.rules().len(), 2);
        assert_eq!(config.options.rules.rules()[0].keep, Keep::days(365));
        assert!(
            matches!(config.backend, ArchiveBackendConfig::Cassandra { ref keyspace, .. } if keyspace == "site_a")
        );
        let raw: RawArchiveConfig =
            toml::from_str("[[rules]]\npriority = \">=LOUD\"\nkeep = \"1d\"").unwrap();
        let err = from_raw(Some(raw)).unwrap_err().to_string();
        assert!(
            err.starts_with("bad value for `archive.rules`: rule 1 `priority`"),
            "{err}"
        );
        let raw: RawArchiveConfig = toml::from_str("[[rules]]\nsubject = \"A\"").unwrap();
        let err = from_raw(Some(raw)).unwrap_err().to_string();
        assert!(err.contains("rule 1 `keep`: missing"), "{err}");
        let raw: RawArchiveConfig = toml::from_str("backend = \"postgres\"").unwrap();
        assert!(from_raw(Some(raw))
            .unwrap_err()
            .to_string()
            .contains("`postgres`"));
    }

    #[test]
    fn cassandra_settings_without_the_cassandra_backend_are_refused() {
        for (text, key, backend) in [
            ("keyspace = \"site_a\"", "keyspace", "embedded"),
            (
                "backend = \"sqlite\"\nreplication_factor = 0",
                "replication_factor",
                "sqlite",
            ),
            (
                "backend = \"none\"\ncontact_points = []",
                "contact_points",
                "none",
            ),
        ] {
            let raw: RawArchiveConfig = toml::from_str(text).unwrap();
            assert_eq!(
                from_raw(Some(raw)).unwrap_err().to_string(),
                format!(
                    "bad value for `archive.{key}`: set, but `archive.backend` is `{backend}`: \
                     contact_points, keyspace and replication_factor are for backend = \
                     \"cassandra\""
                )
            );
        }
        let raw: RawArchiveConfig =
            toml::from_str("backend = \"cassandra\"\nreplication_factor = 0").unwrap();
        assert!(from_raw(Some(raw))
            .unwrap_err()
            .to_string()
            .starts_with("bad value for `archive.replication_factor`: 0"));
    }
}
