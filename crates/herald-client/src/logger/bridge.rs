//! The `log` crate facade: existing code that logs with `log::warn!` and friends sends to
//! Herald through a [`Logger`] without change.
//!
//! Levels map to priorities as `Error` → ERROR, `Warn` → WARNING, `Info` → INFO,
//! `Debug` → DEBUG, `Trace` → TRACE. A target set explicitly
//! (`log::warn!(target: "ANTENNA.DV01.Mount", …)`) becomes the record's subject; the default
//! target (the module path) leaves the logger's subject. The module path, file and line
//! become the record's origin routine, file and line. Messages are formatted in place, so a
//! short one costs no allocation.

use herald_proto::Priority;
use log::{Level, LevelFilter, Metadata, Record, SetLoggerError};

use super::entry::{Source, Text};
use super::Logger;

/// A [`log::Log`] that sends through a [`Logger`].
#[derive(Debug, Clone)]
pub struct LogBridge {
    logger: Logger,
    max_level: LevelFilter,
}

impl LogBridge {
    /// Returns a bridge that passes records up to `max_level` to `logger`.
    pub fn new(logger: Logger, max_level: LevelFilter) -> Self {
        LogBridge { logger, max_level }
    }
}

/// Returns the Herald priority of a `log` level.
pub fn priority_of(level: Level) -> Priority {
    match level {
        Level::Error => Priority::Error,
        Level::Warn => Priority::Warning,
        Level::Info => Priority::Info,
        Level::Debug => Priority::Debug,
        Level::Trace => Priority::Trace,
    }
}

impl log::Log for LogBridge {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // Records below the logger's threshold still feed the flight recorder.
        metadata.level() <= self.max_level
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let target = record.target();
        let subject = match record.module_path() {
            Some(module) if module == target => None,
            _ if target.is_empty() => None,
            _ => Some(target),
        };
        let source = Source {
            file: record.file_static().unwrap_or_default(),
            line: record.line().unwrap_or(0),
            routine: record.module_path_static().unwrap_or_default(),
        };
        let args = *record.args();
        let text = |t: &mut Text| t.set_args(args);
        // A bad subject is counted as a drop (and reported); `log` has no way to return it.
        let _counted = self.logger.emit(
            priority_of(record.level()),
            subject,
            text,
            Vec::new(),
            source,
        );
    }

    /// Wakes the background side; `log::logger().flush()` cannot wait for the server (use
    /// [`Logger::flush`] for that).
    fn flush(&self) {
        self.logger.shared.buffer.wake();
    }
}

/// Installs a [`LogBridge`] to `logger` as the process's `log` logger, passing records up to
/// `max_level`. The bridge keeps a clone of `logger`, so the logger is not closed by a drop:
/// call [`Logger::flush`] or [`Logger::close`] before the program ends.
///
/// # Errors
/// [`SetLoggerError`] if a `log` logger is installed already.
pub fn install_log(logger: Logger, max_level: LevelFilter) -> Result<(), SetLoggerError> {
    log::set_boxed_logger(Box::new(LogBridge::new(logger, max_level)))?;
    log::set_max_level(max_level);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_to_priorities() {
        let pairs = [
            (Level::Error, Priority::Error),
            (Level::Warn, Priority::Warning),
            (Level::Info, Priority::Info),
            (Level::Debug, Priority::Debug),
            (Level::Trace, Priority::Trace),
        ];
        for (level, priority) in pairs {
            assert_eq!(priority_of(level), priority);
        }
    }
}
