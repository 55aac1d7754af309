//! `HERALD_*` environment variables as settings: `HERALD_<KEY>` sets the file's `<key>`,
//! `HERALD_ARCHIVE_<KEY>` the `[archive]` section's, `HERALD_CLUSTER_<KEY>` the
//! `[cluster]` section's, `HERALD_SYSLOG_<KEY>` the `[syslog]` section's. A variable that
//! names no setting is
//! ignored with a warning (a test script's `HERALD_BIN` is not a mistake in the server's
//! configuration); a known setting with a bad value is still an error.

use super::archive::ARCHIVE_KEYS;
use super::cluster::CLUSTER_KEYS;
use super::origin::Origins;
use super::syslog::SYSLOG_KEYS;
use super::{invalid, ConfigError, CLIENT_ENV_VARS, ENV_PREFIX, KEYS, SCRIPT_ENV_PREFIX};

/// Sets the keys `env` names in `table`, recording in `origins` which variable set each;
/// returns a warning for each variable ignored.
///
/// # Errors
/// [`ConfigError`] when a variable names `[archive]` where the file has no table.
pub(super) fn apply(
    table: &mut toml::Table,
    env: impl IntoIterator<Item = (String, String)>,
    origins: &mut Origins,
) -> Result<Vec<String>, ConfigError> {
    let mut warnings = Vec::new();
    for (name, value) in env {
        let Some(key) = name.strip_prefix(ENV_PREFIX) else {
            continue;
        };
        if CLIENT_ENV_VARS.contains(&name.as_str()) || name.starts_with(SCRIPT_ENV_PREFIX) {
            continue;
        }
        let key = key.to_ascii_lowercase();
        if let Some(sub) = key.strip_prefix("cluster_") {
            if CLUSTER_KEYS.contains(&sub) {
                set_section_key(table, "cluster", sub, &value)?;
                origins.record_variable(&format!("cluster.{sub}"), &name, &value);
            } else {
                let known = CLUSTER_KEYS;
                let setting = format!("cluster.{sub}");
                warnings.push(unknown(&name, &setting, sub, &known, "cluster."));
            }
            continue;
        }
        if let Some(sub) = key.strip_prefix("syslog_") {
            if SYSLOG_KEYS.contains(&sub) {
                set_section_key(table, "syslog", sub, &value)?;
                origins.record_variable(&format!("syslog.{sub}"), &name, &value);
            } else {
                let setting = format!("syslog.{sub}");
                warnings.push(unknown(&name, &setting, sub, &SYSLOG_KEYS, "syslog."));
            }
            continue;
        }
        if let Some(sub) = key.strip_prefix("archive_") {
            if ARCHIVE_KEYS.contains(&sub) && sub != "rules" {
                set_section_key(table, "archive", sub, &value)?;
                origins.record_variable(&format!("archive.{sub}"), &name, &value);
                continue;
            }
            let known: Vec<&str> = ARCHIVE_KEYS
                .iter()
                .copied()
                .filter(|k| *k != "rules")
                .collect();
            warnings.push(unknown(
                &name,
                &format!("archive.{sub}"),
                sub,
                &known,
                "archive.",
            ));
            continue;
        }
        if !KEYS.contains(&key.as_str()) || ["archive", "cluster", "syslog"].contains(&key.as_str())
        {
            warnings.push(unknown(&name, &key, &key, &KEYS, ""));
            continue;
        }
        origins.record_variable(&key, &name, &value);
        table.insert(key, env_value(&value));
    }
    Ok(warnings)
}

/// Says that variable `name` was ignored, suggesting the nearest known key.
fn unknown(name: &str, key: &str, bare: &str, known: &[&str], prefix: &str) -> String {
    let nearest = known
        .iter()
        .map(|candidate| (edit_distance(bare, candidate), candidate))
        .filter(|(distance, _)| *distance <= 2)
        .min();
    let hint = match nearest {
        Some((_, candidate)) => format!(" (did you mean `{prefix}{candidate}`?)"),
        None => String::new(),
    };
    format!("ignoring environment variable {name}: `{key}` is not a setting{hint}")
}

/// Returns the Levenshtein distance between `a` and `b` (short keys only).
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous[j] + usize::from(ca != *cb);
            current.push(substitute.min(previous[j + 1] + 1).min(current[j] + 1));
        }
        previous = current;
    }
    previous[b.len()]
}

/// Sets `[section]`'s `key` from a variable (`HERALD_ARCHIVE_KEYSPACE=site_a`);
/// `contact_points` and `routes` take a comma-separated list. Rules only come from the file.
fn set_section_key(
    table: &mut toml::Table,
    name: &'static str,
    key: &str,
    value: &str,
) -> Result<(), ConfigError> {
    let section = table
        .entry(name)
        .or_insert_with(|| toml::Value::Table(toml::Table::new()));
    let Some(section) = section.as_table_mut() else {
        return Err(invalid(name, format!("must be a table (`[{name}]`)")));
    };
    let parsed = match key {
        "contact_points" | "routes" => toml::Value::Array(
            value
                .split(',')
                .map(str::trim)
                .filter(|point| !point.is_empty())
                .map(|point| toml::Value::String(point.to_string()))
                .collect(),
        ),
        _ => env_value(value),
    };
    section.insert(key.to_string(), parsed);
    Ok(())
}

/// Reads an environment value as TOML would: integers and booleans typed, the rest text.
fn env_value(text: &str) -> toml::Value {
    if let Ok(number) = text.parse::<i64>() {
        return toml::Value::Integer(number);
    }
    if let Ok(flag) = text.parse::<bool>() {
        return toml::Value::Boolean(flag);
    }
    toml::Value::String(text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_the_nearest_setting() {
        assert_eq!(edit_distance("listn", "listen"), 1);
        assert_eq!(edit_distance("queue_recrods", "queue_records"), 2);
        let mut table = toml::Table::new();
        let vars = [("HERALD_ARCHIVE_KEYSPAC".to_string(), "x".to_string())];
        let warnings = apply(&mut table, vars, &mut Origins::default()).unwrap();
        assert_eq!(
            warnings,
            [
                "ignoring environment variable HERALD_ARCHIVE_KEYSPAC: `archive.keyspac` is not a \
              setting (did you mean `archive.keyspace`?)"
            ]
        );
        assert!(table.is_empty());
    }
}
