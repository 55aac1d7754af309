//! The server's archive: opening the configured store, answering queries off the async
//! threads, and the acknowledgements that wait until records are durable.

use std::sync::Arc;
use std::time::Duration;

use herald_archive::query::Answer;
use herald_archive::{Archive, ArchiveError, Backend, BlockStore, Budget, EmbeddedBackend};
use herald_proto::archive::ArchiveRequest;

use crate::config::{ArchiveBackendConfig, ArchiveConfig, Config};

/// How long shutdown waits for the archive to write what it holds.
pub const CLOSE_GRACE: Duration = Duration::from_secs(10);

/// Opens the configured store and starts the archive's writer; `None` when the archive is
/// turned off (`backend = "none"`).
///
/// # Errors
/// The store cannot be opened or reached, with the reason.
pub async fn open(config: &Config) -> std::io::Result<Option<Arc<Archive>>> {
    let mut options = config.archive.options.clone();
    let backend: Arc<dyn Backend> = match &config.archive.backend {
        ArchiveBackendConfig::None => return Ok(None),
        ArchiveBackendConfig::Embedded => {
            let dir = ArchiveConfig::embedded_dir(&config.data_dir);
            // A full buffer overflows to disk before anything is dropped.
            options.spill_dir = Some(dir.join("spill"));
            let store = BlockStore::open(&dir).map_err(std::io::Error::other)?;
            let recovery = store.recovery();
            if recovery.unclean {
                tracing::warn!(
                    files_checked = recovery.files_checked,
                    files_cut = recovery.files_cut,
                    bytes_cut = recovery.bytes_cut,
                    "archive: the last run did not close the store (crash or kill); the files \
                     it wrote were checked and torn ends cut (the monitor's archive section \
                     shows the same)"
                );
            }
            for cut in store.repairs() {
                tracing::warn!(
                    file = %cut.path.display(),
                    cut_bytes = cut.repair.cut_bytes,
                    kept_blocks = cut.repair.blocks,
                    "archive: the last run ended without closing the store; a half-written \
                     block was cut from the end of this file (its records were never \
                     acknowledged as stored)"
                );
            }
            warn_of_sqlite_archive(&config.data_dir);
            Arc::new(store)
        }
        ArchiveBackendConfig::Sqlite => {
            let dir = ArchiveConfig::sqlite_dir(&config.data_dir);
            options.spill_dir = Some(dir.join("spill"));
            Arc::new(EmbeddedBackend::open(&dir))
        }
        ArchiveBackendConfig::Cassandra { .. } => cassandra(&config.archive.backend).await?,
    };
    tracing::info!(backend = %backend.describe(), rules = config.archive.options.rules.rules().len(), "archive open");
    let archive = Archive::start(backend, options)?;
    Ok(Some(Arc::new(archive)))
}

/// Tells the operator about an archive an earlier version left in the SQLite store, which
/// the block store does not read.
fn warn_of_sqlite_archive(data_dir: &std::path::Path) {
    let old = ArchiveConfig::sqlite_dir(data_dir);
    let days = herald_archive::embedded::layout::list_slots(&old).map_or(0, |s| s.len());
    if days > 0 {
        tracing::warn!(
            dir = %old.display(),
            days,
            "archive: records from an earlier version are in the SQLite store, which this \
             configuration does not read: stop the server and run `herald archive migrate` \
             to move them into the block store, or set archive.backend = \"sqlite\""
        );
    }
}

#[cfg(feature = "cql")]
async fn cassandra(backend: &ArchiveBackendConfig) -> std::io::Result<Arc<dyn Backend>> {
    use herald_archive::cql::{CqlOptions, LazyCqlBackend};
    let ArchiveBackendConfig::Cassandra {
        contact_points,
        keyspace,
        replication_factor,
    } = backend.clone()
    else {
        unreachable!("called for the cassandra backend only");
    };
    let options = CqlOptions {
        contact_points: contact_points.clone(),
        keyspace,
        replication_factor,
        ..CqlOptions::default()
    };
    // Connecting now tells the operator at once if the node is wrong; a node that is only
    // down does not keep the server from starting: the archive buffers and retries.
    let store = Arc::new(LazyCqlBackend::new(options));
    let probe = Arc::clone(&store);
    let first = tokio::task::spawn_blocking(move || probe.sync())
        .await
        .map_err(std::io::Error::other)?;
    if let Err(err) = first {
        tracing::warn!(
            nodes = %contact_points.join(","),
            error = %err,
            "cannot reach the Cassandra archive yet; records wait in the buffer until it answers"
        );
    }
    Ok(store)
}

#[cfg(not(feature = "cql"))]
async fn cassandra(_backend: &ArchiveBackendConfig) -> std::io::Result<Arc<dyn Backend>> {
    Err(std::io::Error::other(
        "this herald was built without the Cassandra archive (cargo feature `cql`)",
    ))
}

/// Answers `request` on the blocking pool, each page at most `max_bytes` of records, as one
/// answer (for pages, which are one part).
///
/// # Errors
/// The archive's error (`BadQuery` for a query that cannot be answered as asked).
pub async fn query(
    archive: &Arc<Archive>,
    request: ArchiveRequest,
    max_bytes: usize,
) -> Result<Answer, ArchiveError> {
    let mut parts = query_parts(archive, request, max_bytes);
    let mut whole: Option<Answer> = None;
    while let Some(part) = parts.next().await {
        match &mut whole {
            None => whole = Some(part?),
            Some(whole) => whole.extend(part?),
        }
    }
    whole.ok_or_else(|| ArchiveError::io("query task", "ended without an answer"))
}

/// The parts of an answer as the blocking pool reads them ([`Parts::next`]).
pub struct Parts {
    receiver: tokio::sync::mpsc::Receiver<Result<Answer, ArchiveError>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl Parts {
    /// The next part, an error (after which no part follows), or `None` after the last.
    pub async fn next(&mut self) -> Option<Result<Answer, ArchiveError>> {
        if let Some(part) = self.receiver.recv().await {
            return Some(part);
        }
        // The reader stopped: said so by ending, or by panicking (then say it failed).
        let task = self.task.take()?;
        match task.await {
            Ok(()) => None,
            Err(err) => Some(Err(ArchiveError::io("query task", err))),
        }
    }
}

/// Answers `request` in parts of at most `max_bytes` of records
/// ([`herald_archive::query::answer_in_parts`]), read on the blocking pool one part ahead
/// of the reader: a reader that stops reading holds the query to one part in memory.
pub fn query_parts(archive: &Arc<Archive>, request: ArchiveRequest, max_bytes: usize) -> Parts {
    let (sender, receiver) = tokio::sync::mpsc::channel(1);
    let archive = Arc::clone(archive);
    let budget = Budget {
        records: usize::MAX,
        bytes: max_bytes,
        scanned: 1_000_000,
    };
    let task = tokio::task::spawn_blocking(move || {
        let backend = Arc::clone(archive.backend());
        let answered =
            herald_archive::query::answer_in_parts(&*backend, &request, budget, |part| {
                if part.skipped > 0 {
                    archive.count_skipped(part.skipped);
                    crate::events::archive_skipped(part.skipped);
                }
                sender.blocking_send(Ok(part)).is_ok()
            });
        if let Err(err) = answered {
            let _ = sender.blocking_send(Err(err));
        }
    });
    Parts {
        receiver,
        task: Some(task),
    }
}

/// Waits until the archive has made every record up to `ticket` durable.
pub async fn durable(archive: &Archive, ticket: u64) {
    let mut watermark = archive.durable();
    let _ = watermark.wait_for(|durable| *durable >= ticket).await;
}

/// The archive's counters as the monitor shows them.
pub fn stats_value(stats: &herald_archive::ArchiveStats) -> herald_proto::Value {
    use herald_proto::Value;
    let int = |n: u64| Value::Int(i64::try_from(n).unwrap_or(i64::MAX));
    let mut fields = vec![
        ("backend".to_string(), Value::Str(stats.backend.clone())),
        ("backlog".to_string(), int(stats.backlog_records)),
        ("backlog_bytes".to_string(), int(stats.backlog_bytes)),
        ("written".to_string(), int(stats.written)),
        ("dropped".to_string(), int(stats.dropped)),
        ("spilled".to_string(), int(stats.spilled)),
        ("spill_bytes".to_string(), int(stats.spill_bytes)),
        (
            "expired_on_arrival".to_string(),
            int(stats.expired_on_arrival),
        ),
        ("write_errors".to_string(), int(stats.write_errors)),
        ("days_expired".to_string(), int(stats.slots_expired)),
        (
            "skipped_unreadable".to_string(),
            int(stats.skipped_unreadable),
        ),
        (
            "unclean_start".to_string(),
            Value::Bool(stats.recovery.unclean),
        ),
        ("repaired_files".to_string(), int(stats.recovery.files_cut)),
        ("repaired_bytes".to_string(), int(stats.recovery.bytes_cut)),
    ];
    // Drops by priority, for those that lost any: the lowest are shed first.
    for priority in herald_proto::priority::ALL_PRIORITIES {
        let lost = stats.dropped_by_priority[priority as usize];
        if lost > 0 {
            let name = format!("dropped_{}", priority.name().to_ascii_lowercase());
            fields.push((name, int(lost)));
        }
    }
    if let Some(error) = &stats.last_error {
        fields.push(("last_error".to_string(), Value::Str(error.clone())));
    }
    Value::Map(fields)
}

#[cfg(test)]
mod tests {
    use herald_proto::{Priority, Value};

    use super::stats_value;

    #[test]
    fn the_monitor_names_each_priority_that_lost_records() {
        let mut stats = herald_archive::ArchiveStats {
            dropped: 7,
            ..Default::default()
        };
        stats.dropped_by_priority[Priority::Debug as usize] = 5;
        stats.dropped_by_priority[Priority::Warning as usize] = 2;
        let Value::Map(fields) = stats_value(&stats) else {
            panic!("a map");
        };
        let get = |name: &str| {
            fields
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(get("dropped"), Some(Value::Int(7)));
        assert_eq!(get("dropped_debug"), Some(Value::Int(5)));
        assert_eq!(get("dropped_warning"), Some(Value::Int(2)));
        assert_eq!(
            get("dropped_info"),
            None,
            "priorities that lost nothing are left out"
        );
    }
}
