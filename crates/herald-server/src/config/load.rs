//! Loading: the file, then the `HERALD_*` variables, then the flags, merged key by key with
//! where each was set, then read and validated as one.

use std::path::Path;

use super::origin::Origins;
use super::{env, Config, ConfigError, KEYS};

/// A loaded configuration and what was ignored on the way.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The configuration.
    pub config: Config,
    /// Sentences for the operator: `HERALD_*` variables that name no setting, ignored.
    pub warnings: Vec<String>,
}

impl Config {
    /// Loads the configuration: the file at `path` (if any), then `env` variables named
    /// `HERALD_<KEY>`, then `flags` (already keyed like the file), each overriding the last.
    /// A `HERALD_*` variable that names no setting is a warning, not an error: scripts set
    /// variables of their own under that prefix.
    ///
    /// # Errors
    /// [`ConfigError`] naming the file, key or variable and what is wrong with it.
    pub fn load(
        path: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
        flags: toml::Table,
    ) -> Result<Loaded, ConfigError> {
        let mut table = match path {
            Some(path) => read_file(path)?,
            None => toml::Table::new(),
        };
        let mut origins = Origins::default();
        if let Some(path) = path {
            let origin = format!("config file {}", path.display());
            check_keys(&table, &origin)?;
            origins.record_table(&table, &origin);
        }
        let warnings = env::apply(&mut table, env, &mut origins)?;
        check_keys(&flags, "the command line")?;
        origins.record_table(&flags, "the command line");
        for (key, value) in flags {
            // A section given on the command line (`--cluster …`) sets its keys, and keeps
            // the file's others (`[[cluster.namespaces]]`).
            match (table.get_mut(&key), value) {
                (Some(toml::Value::Table(section)), toml::Value::Table(given)) => {
                    section.extend(given);
                }
                (_, value) => {
                    table.insert(key, value);
                }
            }
        }
        let raw = origins.read(table)?;
        let config = Config::from_raw(raw).map_err(|err| origins.locate(err))?;
        Ok(Loaded { config, warnings })
    }
}

fn read_file(path: &Path) -> Result<toml::Table, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    text.parse::<toml::Table>()
        .map_err(|err| ConfigError::Syntax {
            path: path.to_path_buf(),
            message: err.to_string(),
        })
}

fn check_keys(table: &toml::Table, source: &str) -> Result<(), ConfigError> {
    match table.keys().find(|key| !KEYS.contains(&key.as_str())) {
        Some(key) => Err(ConfigError::UnknownKey {
            key: key.clone(),
            origin: source.to_string(),
        }),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn flags_beat_env_beat_defaults() {
        let mut flags = toml::Table::new();
        flags.insert(
            "listen".into(),
            toml::Value::String("127.0.0.1:9000".into()),
        );
        let vars = env(&[
            ("HERALD_LISTEN", "127.0.0.1:8000"),
            ("HERALD_QUEUE_BYTES", "1MiB"),
            ("HERALD_HTTP", "127.0.0.1:8480"),
            ("HERALD_CASSANDRA", "127.0.0.1:9042"),
            ("PATH", "/bin"),
        ]);
        let config = Config::load(None, vars, flags).unwrap().config;
        assert_eq!(config.listen.port(), 9000);
        assert_eq!(config.queue.max_bytes, 1 << 20);
        assert_eq!(config.http.port(), 8480);
    }

    #[test]
    fn an_unknown_variable_is_a_warning_that_names_it() {
        let vars = env(&[("HERALD_LISTN", "x"), ("HERALD_BIN", "/tmp/herald")]);
        let loaded = Config::load(None, vars, toml::Table::new()).unwrap();
        assert_eq!(loaded.config, Config::default());
        assert_eq!(
            loaded.warnings,
            [
                "ignoring environment variable HERALD_LISTN: `listn` is not a setting (did you \
                 mean `listen`?)",
                "ignoring environment variable HERALD_BIN: `bin` is not a setting"
            ]
        );
    }

    #[test]
    fn a_bad_value_names_its_key_and_where_it_was_set() {
        let err = |file: &str, vars: &[(&str, &str)], flags: toml::Table| {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("herald.toml");
            std::fs::write(&path, file).unwrap();
            let err = Config::load(Some(&path), env(vars), flags).unwrap_err();
            err.to_string()
                .replace(&path.display().to_string(), "herald.toml")
        };
        assert_eq!(
            err("", &[("HERALD_MAX_CONNECTIONS", "abc")], toml::Table::new()),
            "bad value for `max_connections` (from environment variable \
             HERALD_MAX_CONNECTIONS): invalid type: string \"abc\", expected u64"
        );
        assert_eq!(
            err("heartbeat_interval = \"soon\"\n", &[], toml::Table::new()),
            "bad value for `heartbeat_interval` (from config file herald.toml): bad duration \
             `soon` (expected e.g. `500ms`, `2s`, `1m`, `1h`)"
        );
        let section = err(
            "[archive]\nbatch_recordz = 1\n",
            &[("HERALD_ARCHIVE_KEYSPACE", "site")],
            toml::Table::new(),
        );
        assert!(
            section.starts_with(
                "bad value for `archive` (from config file herald.toml): unknown field \
                 `batch_recordz`, expected one of"
            ),
            "{section}"
        );
        // `--cluster NAME` sets a key of the section; a bad route in the file is the file's.
        let mut flags = toml::Table::new();
        let mut cluster = toml::Table::new();
        cluster.insert("name".into(), toml::Value::String("c".into()));
        flags.insert("cluster".into(), toml::Value::Table(cluster));
        assert_eq!(
            err("[cluster]\nroutes = [\"http://x:1\"]\n", &[], flags),
            "bad value for `cluster.routes` (from config file herald.toml): route `http://x:1` is \
             not a herald:// URL (expected herald://host:port of a member's route listener)"
        );
        let mut flags = toml::Table::new();
        flags.insert("name".into(), toml::Value::String(" ".into()));
        assert_eq!(
            err("name = \"a\"\n", &[("HERALD_NAME", "b")], flags),
            "bad value for `name` (from the command line): \" \": give 1 to 255 bytes of text, \
             not only spaces, no control character"
        );
    }

    #[test]
    fn a_variable_that_looks_like_a_number_is_text_where_text_is_wanted() {
        let vars = env(&[
            ("HERALD_NAME", "007"),
            ("HERALD_CLUSTER_NAME", "true"),
            ("HERALD_MAX_CONNECTIONS", "12"),
        ]);
        let config = Config::load(None, vars, toml::Table::new()).unwrap().config;
        assert_eq!(
            config.name, "007",
            "the variable's text, not the number read from it"
        );
        assert_eq!(config.cluster.unwrap().name, "true");
        assert_eq!(config.max_connections, 12);
    }
}
