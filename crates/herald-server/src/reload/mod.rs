//! Live reload: SIGHUP, and `RELOAD` from a client with the `admin` permission (`herald
//! admin reload`), read the configuration again — the same file, variables and flags — and
//! put in force what can change while the server runs: limits, queue defaults, storm and
//! quota thresholds, archive rules, the identities file's contents, the syslog listeners,
//! timeouts, the log level. What cannot (addresses, the data directory, the archive's
//! store, TLS files' paths, the cluster, mirrors) is named in the answer and keeps its old
//! value until a restart ([`diff`]). A new configuration that does not validate, or whose
//! syslog addresses cannot be bound, or whose identities file cannot be read, is refused
//! as a whole and the old one stays in force. Connections stay open and records in flight
//! go on: new limits and queue defaults apply to the connections and subscriptions made
//! after the reload, storms open under the old rule end with their summaries, and a moved
//! syslog listener's last batch is routed before it stops.

pub mod diff;
pub mod reloader;

pub use reloader::{LogLevelHook, Reloader};

use std::sync::Arc;

use herald_proto::value::{Field, Value};

use crate::config::{Config, ConfigError, Loaded};
use crate::shared::Shared;
use crate::shutdown::Shutdown;
use diff::When;

/// What a reload did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Settings changed and in force now.
    pub applied: Vec<&'static str>,
    /// Settings changed in the file that keep their old value until a restart.
    pub restart: Vec<&'static str>,
    /// Warnings of the configuration (a `HERALD_*` variable that names no setting).
    pub warnings: Vec<String>,
}

impl Outcome {
    /// Returns the body of a `RELOAD_REPLY`: `applied`, `restart` and `warnings`, arrays of
    /// strings.
    pub fn fields(&self) -> Vec<Field> {
        let list = |items: Vec<String>| Value::Array(items.into_iter().map(Value::Str).collect());
        let keys = |keys: &[&str]| list(keys.iter().map(ToString::to_string).collect());
        vec![
            ("applied".into(), keys(&self.applied)),
            ("restart".into(), keys(&self.restart)),
            ("warnings".into(), list(self.warnings.clone())),
        ]
    }

    /// Says what changed, for people.
    pub fn describe(&self) -> String {
        let mut text = if self.applied.is_empty() {
            "configuration reloaded: nothing that can change live changed".to_string()
        } else {
            format!(
                "configuration reloaded: {} in force",
                self.applied.join(", ")
            )
        };
        if !self.restart.is_empty() {
            text.push_str(&format!(
                "; changed but waiting for a restart: {}",
                self.restart.join(", ")
            ));
        }
        text
    }
}

/// Why a reload changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReloadError {
    /// The server was started from a configuration made in code.
    #[error(
        "this server has no configuration file, variables or flags to read again (it was \
         started from a configuration made in code)"
    )]
    NoSource,
    /// The new configuration does not validate.
    #[error("the new configuration is refused and the old one stays in force: {0}")]
    Config(#[from] ConfigError),
    /// Part of the new configuration cannot be put in force.
    #[error("the new configuration is refused and the old one stays in force: {0}")]
    Apply(String),
}

/// Reads the configuration again from its source and applies it.
///
/// # Errors
/// [`ReloadError`]; then nothing changed.
pub async fn reload(shared: &Arc<Shared>) -> Result<Outcome, ReloadError> {
    let source = shared.reloader.source.get().ok_or(ReloadError::NoSource)?;
    let Loaded { config, warnings } = source.load()?;
    apply(shared, config, warnings).await
}

/// Applies `new`: what can change live is put in force, what cannot is named.
///
/// # Errors
/// [`ReloadError::Apply`] when a syslog address cannot be bound or the identities file
/// cannot be read; then nothing changed.
pub async fn apply(
    shared: &Arc<Shared>,
    new: Config,
    warnings: Vec<String>,
) -> Result<Outcome, ReloadError> {
    let _one = shared.reloader.one_at_a_time.lock().await;
    let old = shared.config();
    let hook = shared.reloader.log_level.get();
    let changes = diff::changes(&old, &new, hook.is_some());
    let live = |key: &str| changes.iter().any(|c| c.0 == key && c.1 == When::Live);
    // What can fail comes first: after it, nothing does.
    let doors = if live("syslog") {
        let prepared = shared.syslog_doors.prepare(new.syslog.as_ref()).await;
        Some(prepared.map_err(|err| ReloadError::Apply(err.to_string()))?)
    } else {
        None
    };
    match shared.guard.reload_if_changed() {
        Ok(true) => crate::revoke::close_revoked(shared),
        Ok(false) => {}
        Err(err) => {
            return Err(ReloadError::Apply(format!("cannot read identities: {err}")));
        }
    }
    let config = diff::in_force(&old, new, hook.is_some());
    shared
        .connections
        .set_limits(config.max_connections, config.max_connections_per_address);
    shared
        .syslog_connections
        .set_limits(config.max_connections, config.max_connections_per_address);
    let http = config.http_limits;
    shared
        .http_connections
        .set_limits(http.max_connections, http.max_connections_per_address);
    shared.queue_budget.set_max_bytes(config.queue_budget_bytes);
    let storm_keys = [
        "storm_window",
        "storm_repeats",
        "source_quota",
        "protected_priority",
    ];
    if storm_keys.iter().any(|key| live(key)) {
        shared.storms.reconfigure(&config);
    }
    if let (true, Some(archive)) = (live("archive.rules"), &shared.archive) {
        archive.set_rules(config.archive.options.rules.clone());
    }
    if let (true, Some(hook)) = (live("log_level"), hook) {
        if let Err(err) = hook(&config.log_level) {
            tracing::warn!("the log level stays as it was: {err}");
        }
    }
    shared.put_config(config);
    if let Some(prepared) = doors {
        shared.syslog_doors.commit(shared, prepared).await;
    }
    let pick = |when: When| -> Vec<&'static str> {
        changes
            .iter()
            .filter(|c| c.1 == when)
            .map(|c| c.0)
            .collect()
    };
    let outcome = Outcome {
        applied: pick(When::Live),
        restart: pick(When::Restart),
        warnings,
    };
    tracing::info!("{}", outcome.describe());
    Ok(outcome)
}

/// Reloads on every SIGHUP until shutdown.
pub async fn on_hangup(shared: Arc<Shared>, mut shutdown: Shutdown) {
    use tokio::signal::unix::{signal, SignalKind};
    let mut hangups = match signal(SignalKind::hangup()) {
        Ok(hangups) => hangups,
        Err(err) => {
            tracing::warn!(
                "cannot listen for SIGHUP, so reloads need `herald admin reload`: {err}"
            );
            return;
        }
    };
    loop {
        tokio::select! {
            _ = hangups.recv() => {}
            () = shutdown.recv() => return,
        }
        if let Err(err) = reload(&shared).await {
            tracing::error!("SIGHUP: {err}");
        }
    }
}
