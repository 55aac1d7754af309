//! Where each setting came from (the file, a variable, a flag), so that an error names it:
//! "bad value for `max_connections` (from environment variable HERALD_MAX_CONNECTIONS): …".

use std::collections::BTreeMap;

use serde::Deserialize;

use super::{ConfigError, RawConfig};

/// Where every key was set, by its path (`listen`, `archive.keyspace`); a later origin of
/// the same key replaces the earlier one, as its value does.
#[derive(Debug, Default)]
pub(super) struct Origins {
    /// The origin of each key: `config file …`, `environment variable …`, `the command line`.
    origins: BTreeMap<String, String>,
    /// The text of each value a variable set: read again as that text where the setting
    /// takes text (`HERALD_NAME=007` names the server `007`, not `7`).
    texts: BTreeMap<String, String>,
}

impl Origins {
    /// Records every key of `table`, and every key of its sections, as set by `origin`. A
    /// section keeps the origin that first set it: `--cluster NAME` sets `cluster.name`, and
    /// the file's `[cluster]` (its other keys) stays the file's.
    pub(super) fn record_table(&mut self, table: &toml::Table, origin: &str) {
        for (key, value) in table {
            if let toml::Value::Table(section) = value {
                self.origins
                    .entry(key.clone())
                    .or_insert_with(|| origin.to_string());
                for sub in section.keys() {
                    self.record(&format!("{key}.{sub}"), origin);
                }
            } else {
                self.record(key, origin);
            }
        }
    }

    /// Records `path` (`name`, `cluster.routes`) as set by `origin`.
    pub(super) fn record(&mut self, path: &str, origin: &str) {
        self.origins.insert(path.to_string(), origin.to_string());
        self.texts.remove(path);
    }

    /// Records `path` as set by the variable `name` to `text`.
    pub(super) fn record_variable(&mut self, path: &str, name: &str, text: &str) {
        self.origins
            .insert(path.to_string(), format!("{VARIABLE}{name}"));
        self.texts.insert(path.to_string(), text.to_string());
    }

    /// Says where `path` was set: its own origin, else that of the section holding it. An
    /// index in the path (`cluster.namespaces[1].names`) is read as its array's key.
    fn of(&self, path: &str) -> Option<&str> {
        let (mut path, _) = path.split_once('[').unwrap_or((path, ""));
        loop {
            if let Some(origin) = self.origins.get(path) {
                return Some(origin);
            }
            path = path.rsplit_once('.')?.0;
        }
    }

    /// Adds to a bad value's error where the value came from.
    pub(super) fn locate(&self, error: ConfigError) -> ConfigError {
        match error {
            ConfigError::Invalid {
                key,
                origin: None,
                message,
            } => ConfigError::Invalid {
                origin: self.of(&key).map(str::to_string),
                key,
                message,
            },
            other => other,
        }
    }

    /// Reads the merged `table` as [`RawConfig`]. A variable's value reads as a number or a
    /// boolean when it looks like one; where the setting takes text (`HERALD_NAME=42`) it is
    /// read again as the text it was.
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the key, where it was set, and what is wrong.
    pub(super) fn read(&self, mut table: toml::Table) -> Result<RawConfig, ConfigError> {
        loop {
            let error = match RawConfig::deserialize(toml::Value::Table(table.clone())) {
                Ok(raw) => return Ok(raw),
                Err(error) => error,
            };
            let message = error.message().trim_end().to_string();
            let path = key_path(&error);
            let text = self.texts.get(&path);
            if let Some(text) = text.filter(|_| message.contains("expected a string")) {
                if as_text(&mut table, &path, text) {
                    continue;
                }
            }
            return Err(self.locate(ConfigError::Invalid {
                key: if path.is_empty() {
                    "(top level)".to_string()
                } else {
                    path
                },
                origin: None,
                message,
            }));
        }
    }
}

/// How an environment variable's origin starts.
pub(super) const VARIABLE: &str = "environment variable ";

/// The dotted path of the key a deserialization error is about (`archive.keyspace`); the
/// TOML reader gives it only in its text, as a last line "in `archive.keyspace`".
fn key_path(error: &toml::de::Error) -> String {
    error
        .to_string()
        .lines()
        .rev()
        .find_map(|line| line.strip_prefix("in `")?.strip_suffix('`'))
        .unwrap_or_default()
        .to_string()
}

/// Turns the number or boolean at `path` back into `text`, the variable's; false when there is
/// none (then it was text already, and the error stands).
fn as_text(table: &mut toml::Table, path: &str, text: &str) -> bool {
    let mut keys = path.split('.');
    let Some(mut value) = keys.next().and_then(|key| table.get_mut(key)) else {
        return false;
    };
    for key in keys {
        match value
            .as_table_mut()
            .and_then(|section| section.get_mut(key))
        {
            Some(inner) => value = inner,
            None => return false,
        }
    }
    if !matches!(value, toml::Value::Integer(_) | toml::Value::Boolean(_)) {
        return false;
    }
    *value = toml::Value::String(text.to_string());
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_innermost_origin_known_is_the_one_named() {
        let mut origins = Origins::default();
        let file: toml::Table = "listen = \"x\"\n[archive]\nkeyspace = \"k\"\n"
            .parse()
            .unwrap();
        origins.record_table(&file, "config file h.toml");
        origins.record(
            "archive.keyspace",
            "environment variable HERALD_ARCHIVE_KEYSPACE",
        );
        assert_eq!(origins.of("listen"), Some("config file h.toml"));
        assert_eq!(
            origins.of("archive.keyspace"),
            Some("environment variable HERALD_ARCHIVE_KEYSPACE")
        );
        assert_eq!(
            origins.of("archive.rules.match"),
            Some("config file h.toml")
        );
        assert_eq!(origins.of("http"), None);
    }
}
