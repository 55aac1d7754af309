//! [`Reloader`]: where the configuration comes from, how the diagnostics' level is set, and
//! one reload at a time — what a server keeps for its reloads (`reload/mod.rs` makes them).

use std::sync::OnceLock;

use crate::config::Source;

/// Sets the level of the server's own diagnostics (`error` … `trace`).
pub type LogLevelHook = Box<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Where the configuration comes from, and one reload at a time.
#[derive(Default)]
pub struct Reloader {
    pub(super) source: OnceLock<Source>,
    pub(super) log_level: OnceLock<LogLevelHook>,
    pub(super) one_at_a_time: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for Reloader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reloader")
            .field("source", &self.source.get())
            .field("log_level_hook", &self.log_level.get().is_some())
            .finish_non_exhaustive()
    }
}

impl Reloader {
    /// Records where the configuration comes from (once).
    pub fn set_source(&self, source: Source) {
        let _ = self.source.set(source);
    }

    /// Records how the diagnostics' level changes (once).
    pub fn set_log_level_hook(&self, hook: LogLevelHook) {
        let _ = self.log_level.set(hook);
    }
}
