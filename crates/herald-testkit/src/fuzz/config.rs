//! The configuration target.

use std::fmt::Display;
use std::net::SocketAddr;
use std::str::FromStr;

use herald_server::config::{Config, RawConfig};
use serde::Deserialize;

/// Keys whose values `Config::from_raw` resolves with `ToSocketAddrs`.
const ADDRESS_KEYS: [&str; 2] = ["listen", "http"];

/// Input: the text of a configuration file. Lines `#HERALD_<KEY>=<value>` (comments to
/// TOML) also become environment variables.
///
/// The text goes in the two ways the server reads settings: through `Config::load`, as a
/// table (what the file and the command line give), and through `toml::from_str` into
/// `RawConfig` then `Config::from_raw`. Errors are fine; both ways must agree, and a
/// configuration that loads must keep the rules `from_raw` promises. A `listen` or `http`
/// address that would need a DNS lookup is left out, so that fuzzing does no I/O.
pub fn config_parse(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let env: Vec<(String, String)> = text
        .lines()
        .filter_map(|line| line.strip_prefix('#')?.split_once('='))
        .filter(|(name, value)| name.starts_with("HERALD_") && !names_address(name, value))
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect();
    let table = text.parse::<toml::Table>().map(without_lookups);
    let direct = toml::from_str::<RawConfig>(text).map(|mut raw| {
        for address in [&mut raw.listen, &mut raw.http] {
            if address.as_deref().is_some_and(needs_lookup) {
                *address = None;
            }
        }
        raw
    });
    let Ok(table) = table else {
        return assert!(direct.is_err(), "toml::from_str takes what is not a table");
    };
    if let Ok(loaded) = Config::load(None, env, table.clone()) {
        check_config(&loaded.config);
    }
    let loaded = Config::load(None, [], table.clone()).map(|loaded| loaded.config);
    let direct = direct.ok().map(Config::from_raw);
    match (loaded, direct) {
        (Ok(loaded), Some(Ok(direct))) => assert_eq!(loaded, direct, "both ways agree"),
        (Err(_), None | Some(Err(_))) => {}
        (loaded, direct) => {
            // `Config::load` refuses unknown keys before `RawConfig` sees them.
            let typed = RawConfig::deserialize(toml::Value::Table(table));
            assert!(
                typed.is_err(),
                "load gives {loaded:?}, from_raw gives {direct:?}"
            );
        }
    }
}

fn check_config(config: &Config) {
    assert!((1024..=256 << 20).contains(&config.max_frame_bytes));
    assert!(config.max_connections > 0 && config.max_subscriptions > 0);
    assert!(config.queue.max_records > 0 && config.queue.max_bytes > 0);
    assert!(config.queue.hard_bytes >= config.queue.max_bytes);
    assert!(config.heartbeat_timeout > config.heartbeat_interval);
    assert!(!config.heartbeat_interval.is_zero() && !config.handshake_timeout.is_zero());
    assert!(!config.max_block_timeout.is_zero());
    assert!(["error", "warn", "info", "debug", "trace"].contains(&config.log_level.as_str()));
    let options = &config.archive.options;
    assert!(options.buffer_records > 0 && options.buffer_bytes > 0 && options.spill_bytes > 0);
    for rule in options.rules.rules() {
        assert!(parses_back(&rule.keep), "retention {}", rule.keep);
        assert!(
            parses_back(&rule.priorities),
            "priorities {}",
            rule.priorities
        );
        assert!(parses_back(&rule.subject) && parses_back(&rule.type_name));
    }
}

/// Returns true if `value`'s text parses back to it.
fn parses_back<T: Display + FromStr + PartialEq>(value: &T) -> bool {
    value
        .to_string()
        .parse::<T>()
        .is_ok_and(|again| again == *value)
}

/// Returns true if `address` is text that `ToSocketAddrs` would hand to the resolver: not a
/// socket address itself, but `host:port` with a port that parses.
fn needs_lookup(address: &str) -> bool {
    address.parse::<SocketAddr>().is_err()
        && address
            .rsplit_once(':')
            .is_some_and(|(_, port)| port.parse::<u16>().is_ok())
}

/// Returns true for a `HERALD_LISTEN` or `HERALD_HTTP` variable that needs a lookup (the
/// key after the prefix is matched in any case, as the server does).
fn names_address(name: &str, value: &str) -> bool {
    let key = name["HERALD_".len()..].to_ascii_lowercase();
    ADDRESS_KEYS.contains(&key.as_str()) && needs_lookup(value)
}

fn without_lookups(mut table: toml::Table) -> toml::Table {
    for key in ADDRESS_KEYS {
        if table
            .get(key)
            .and_then(toml::Value::as_str)
            .is_some_and(needs_lookup)
        {
            table.remove(key);
        }
    }
    table
}
