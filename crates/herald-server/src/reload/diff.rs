//! Which settings a new configuration changes, and which of them can change while the
//! server runs. A setting is compared as a whole (a section by its keys); what waits for a
//! restart keeps its old value in the configuration put in force ([`in_force`]), so that
//! the server never claims a value it does not use.

use std::fmt::Debug;

use crate::config::Config;

/// Whether a changed setting takes effect now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// Now (for new connections and subscriptions where the setting is theirs).
    Live,
    /// At the next start of the server.
    Restart,
}

/// One changed setting: its key as written in the file, and when it takes effect.
pub type Change = (&'static str, When);

/// Returns the settings `new` changes from `old`; `log_level` is live when `log_level_live`.
pub fn changes(old: &Config, new: &Config, log_level_live: bool) -> Vec<Change> {
    use When::{Live, Restart};
    let mut out = Vec::new();
    let mut check = |key: &'static str, when: When, a: &dyn Debug, b: &dyn Debug| {
        if format!("{a:?}") != format!("{b:?}") {
            out.push((key, when));
        }
    };
    check("name", Restart, &old.name, &new.name);
    check("listen", Restart, &old.listen, &new.listen);
    check("http", Restart, &old.http, &new.http);
    check("otlp_grpc", Restart, &old.otlp_grpc, &new.otlp_grpc);
    check("data_dir", Restart, &old.data_dir, &new.data_dir);
    check(
        "max_frame_bytes",
        Restart,
        &old.max_frame_bytes,
        &new.max_frame_bytes,
    );
    check(
        "max_connections",
        Live,
        &old.max_connections,
        &new.max_connections,
    );
    check(
        "max_connections_per_address",
        Live,
        &old.max_connections_per_address,
        &new.max_connections_per_address,
    );
    let (oh, nh) = (&old.http_limits, &new.http_limits);
    check(
        "http_max_connections",
        Live,
        &oh.max_connections,
        &nh.max_connections,
    );
    check(
        "http_max_connections_per_address",
        Live,
        &oh.max_connections_per_address,
        &nh.max_connections_per_address,
    );
    check(
        "http_header_timeout",
        Live,
        &oh.header_timeout,
        &nh.header_timeout,
    );
    check(
        "max_subscriptions",
        Live,
        &old.max_subscriptions,
        &new.max_subscriptions,
    );
    let (oq, nq) = (&old.queue, &new.queue);
    check("queue_records", Live, &oq.max_records, &nq.max_records);
    check("queue_bytes", Live, &oq.max_bytes, &nq.max_bytes);
    check("queue_hard_bytes", Live, &oq.hard_bytes, &nq.hard_bytes);
    check("protected_priority", Live, &oq.protected, &nq.protected);
    check(
        "queue_budget_bytes",
        Live,
        &old.queue_budget_bytes,
        &new.queue_budget_bytes,
    );
    check(
        "storm_window",
        Live,
        &old.storm.window_ns,
        &new.storm.window_ns,
    );
    check(
        "storm_repeats",
        Live,
        &old.storm.repeats,
        &new.storm.repeats,
    );
    check("source_quota", Live, &old.source_quota, &new.source_quota);
    check(
        "max_block_timeout",
        Live,
        &old.max_block_timeout,
        &new.max_block_timeout,
    );
    check(
        "heartbeat_interval",
        Live,
        &old.heartbeat_interval,
        &new.heartbeat_interval,
    );
    check(
        "heartbeat_timeout",
        Live,
        &old.heartbeat_timeout,
        &new.heartbeat_timeout,
    );
    check(
        "handshake_timeout",
        Live,
        &old.handshake_timeout,
        &new.handshake_timeout,
    );
    let log_level = if log_level_live { Live } else { Restart };
    check("log_level", log_level, &old.log_level, &new.log_level);
    check(
        "identities",
        Restart,
        &old.security.identities,
        &new.security.identities,
    );
    check(
        "insecure_open",
        Restart,
        &old.security.insecure_open,
        &new.security.insecure_open,
    );
    check("tls", Restart, &old.tls, &new.tls);
    check(
        "archive.rules",
        Live,
        &old.archive.options.rules,
        &new.archive.options.rules,
    );
    let (mut oa, mut na) = (old.archive.clone(), new.archive.clone());
    oa.options.rules = na.options.rules.clone();
    na.options.rules = oa.options.rules.clone();
    check("archive", Restart, &oa, &na);
    check("cluster", Restart, &old.cluster, &new.cluster);
    check("mirror", Restart, &old.mirrors, &new.mirrors);
    check("syslog", Live, &old.syslog, &new.syslog);
    out
}

/// Returns `new` with every setting that waits for a restart as it is in `old` (the same
/// settings [`changes`] marks [`When::Restart`]): the configuration in force after the reload.
pub fn in_force(old: &Config, new: Config, log_level_live: bool) -> Config {
    let rules = new.archive.options.rules.clone();
    let mut config = Config {
        name: old.name.clone(),
        listen: old.listen,
        http: old.http,
        otlp_grpc: old.otlp_grpc,
        data_dir: old.data_dir.clone(),
        max_frame_bytes: old.max_frame_bytes,
        security: old.security.clone(),
        tls: old.tls.clone(),
        archive: old.archive.clone(),
        cluster: old.cluster.clone(),
        mirrors: old.mirrors.clone(),
        ..new
    };
    config.archive.options.rules = rules;
    if !log_level_live {
        config.log_level.clone_from(&old.log_level);
    }
    config
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_each_change_and_keeps_what_waits_for_a_restart() {
        let old = Config::default();
        let mut new = Config::default();
        new.queue.max_records = 7;
        new.listen = "127.0.0.1:1".parse().unwrap();
        new.source_quota = 5;
        let changes = changes(&old, &new, false);
        assert_eq!(
            changes,
            vec![
                ("listen", When::Restart),
                ("queue_records", When::Live),
                ("source_quota", When::Live)
            ]
        );
        let config = in_force(&old, new, false);
        assert_eq!(config.listen, old.listen);
        assert_eq!(config.queue.max_records, 7);
        assert_eq!(config.source_quota, 5);
    }

    #[test]
    fn archive_rules_are_live_and_the_store_is_not() {
        let old = Config::default();
        let mut new = Config::default();
        new.archive.options.rules = herald_archive::Rules::new(Vec::new());
        new.archive.options.buffer_records += 1;
        let changes = changes(&old, &new, true);
        assert_eq!(
            changes,
            vec![("archive.rules", When::Live), ("archive", When::Restart)]
        );
        let config = in_force(&old, new, true);
        assert!(config.archive.options.rules.rules().is_empty());
        assert_eq!(
            config.archive.options.buffer_records,
            old.archive.options.buffer_records
        );
    }

    #[test]
    fn the_log_level_changes_only_where_the_program_can_change_it() {
        let old = Config::default();
        let new = Config {
            log_level: "debug".into(),
            ..Config::default()
        };
        assert_eq!(
            changes(&old, &new, false),
            vec![("log_level", When::Restart)]
        );
        assert_eq!(in_force(&old, new.clone(), false).log_level, old.log_level);
        assert_eq!(changes(&old, &new, true), vec![("log_level", When::Live)]);
        assert_eq!(in_force(&old, new, true).log_level, "debug");
    }
}
