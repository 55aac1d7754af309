//! The keyspace, its tables and the statements prepared on them.
//!
//! ```text
//! sample_blocks ((name, day, keep), start_time, start_seq) -> block  one name's day of a class
//! log_blocks    ((day, hour, keep), start_time, start_seq) -> block  one hour of logs
//! name_slots ((name), day, keep)            the slots of a name          (Source::Samples)
//! slots      ((keep), day, source)          the days of a class, and whether they hold
//!                                           samples, logs or both  (Source::Logs, expiry)
//! slot_names ((keep, day), name)            the sample partitions of a slot      (expiry)
//! classes    ((part), keep)                 every retention class, in one partition (0)
//! ```
//!
//! Times and sequence numbers are `bigint` (nanoseconds; sequence numbers as two's
//! complement, as the embedded store keeps them), `keep` is the class's retention in
//! seconds, `day` the day since the epoch (UTC), `hour` the hour of that day (0 to 23).
//! A `block` is a block of records in the embedded store's format, clustered by its first
//! record's (time, seq) (see `cql/blocks.rs`).
//!
//! Keyspaces written before block rows (up to 2026-11-27) also have a row per record:
//! `samples ((name, day, keep), time, seq) -> received, record` and `logs ((day, hour,
//! keep), time, seq) -> priority, received, record`. Where those tables exist, reads merge
//! their rows with the blocks' and expiry deletes their partitions too ([`Legacy`]); new
//! keyspaces do not get them.
//!
//! A clustering column takes one lower bound: `time >= ? AND time < ? AND (time, seq) >
//! (?, ?)` is rejected ("More than one restriction was found for the start bound on time",
//! Cassandra 5.0). So reads compute the lower bound in Rust — `(time, seq) > (after)` when
//! the cursor is within the range, else `(time, seq) >= (from, i64::MIN)` — and bound both
//! ends with `(time, seq)` tuples, the upper one as `(time, seq) < (to, i64::MIN)`.

use scylla::client::session::Session;
use scylla::statement::prepared::PreparedStatement;
use scylla::statement::Statement;

use super::errors::{execution_error, prepare_error, rows_error};
use super::options::CqlOptions;
use crate::error::ArchiveError;
use crate::keep::Keep;

/// Schema changes wait for every node to agree; give them more than a plain request.
const SCHEMA_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

/// The tables, by name, and how to create them (`{ks}` is the keyspace).
const TABLES: [(&str, &str); 6] = [
    (
        "sample_blocks",
        "CREATE TABLE IF NOT EXISTS {ks}.sample_blocks (name text, day int, keep bigint, \
         start_time bigint, start_seq bigint, block blob, \
         PRIMARY KEY ((name, day, keep), start_time, start_seq)) \
         WITH CLUSTERING ORDER BY (start_time ASC, start_seq ASC)",
    ),
    (
        "log_blocks",
        "CREATE TABLE IF NOT EXISTS {ks}.log_blocks (day int, hour int, keep bigint, \
         start_time bigint, start_seq bigint, block blob, \
         PRIMARY KEY ((day, hour, keep), start_time, start_seq)) \
         WITH CLUSTERING ORDER BY (start_time ASC, start_seq ASC)",
    ),
    (
        "name_slots",
        "CREATE TABLE IF NOT EXISTS {ks}.name_slots (name text, day int, keep bigint, \
         PRIMARY KEY ((name), day, keep))",
    ),
    (
        "slots",
        "CREATE TABLE IF NOT EXISTS {ks}.slots (keep bigint, day int, source text, \
         PRIMARY KEY ((keep), day, source))",
    ),
    (
        "slot_names",
        "CREATE TABLE IF NOT EXISTS {ks}.slot_names (keep bigint, day int, name text, \
         PRIMARY KEY ((keep, day), name))",
    ),
    (
        "classes",
        "CREATE TABLE IF NOT EXISTS {ks}.classes (part int, keep bigint, \
         PRIMARY KEY ((part), keep))",
    ),
];

/// The value of `classes.part`: every class lives in this one partition.
pub(super) const CLASSES_PART: i32 = 0;

/// Returns `keep` as stored (seconds).
pub(super) fn keep_value(keep: Keep) -> i64 {
    i64::try_from(keep.as_secs()).unwrap_or(i64::MAX)
}

/// Returns the class stored as `value`.
pub(super) fn keep_of(value: i64) -> Keep {
    Keep::seconds(u64::try_from(value).unwrap_or(1))
}

/// Checks that `keyspace` is a plain CQL name (it is spliced into statements).
///
/// # Errors
/// `BadQuery` naming the problem.
pub(super) fn check_keyspace_name(keyspace: &str) -> Result<(), ArchiveError> {
    let plain = keyspace
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_');
    let starts = keyspace.starts_with(|c: char| c.is_ascii_alphabetic());
    if plain && starts && keyspace.len() <= 48 {
        Ok(())
    } else {
        Err(ArchiveError::bad_query(format!(
            "bad keyspace name `{keyspace}`: give up to 48 letters, digits and `_`, \
             starting with a letter"
        )))
    }
}

pub(super) async fn schema_change(session: &Session, cql: String) -> Result<(), ArchiveError> {
    let mut statement = Statement::new(cql.clone());
    statement.set_request_timeout(Some(SCHEMA_TIMEOUT));
    session
        .query_unpaged(statement, ())
        .await
        .map_err(|err| execution_error(&cql, &err))?;
    Ok(())
}

/// Creates the keyspace and whichever tables are missing; returns whether the keyspace has
/// the row-per-record tables of earlier versions.
pub(super) async fn create(session: &Session, options: &CqlOptions) -> Result<bool, ArchiveError> {
    let ks = &options.keyspace;
    let existing = session
        .query_unpaged(
            "SELECT table_name FROM system_schema.tables WHERE keyspace_name = ?",
            (ks.to_lowercase(),),
        )
        .await
        .map_err(|err| execution_error("listing the keyspace's tables", &err))?
        .into_rows_result()
        .map_err(|err| rows_error("system_schema.tables", err))?;
    let existing: Vec<String> = existing
        .rows::<(String,)>()
        .map_err(|err| rows_error("system_schema.tables", err))?
        .map(|row| row.map(|(name,)| name))
        .collect::<Result<_, _>>()
        .map_err(|err| rows_error("system_schema.tables", err))?;
    if existing.is_empty() {
        schema_change(
            session,
            format!(
                "CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = \
                 {{'class': 'SimpleStrategy', 'replication_factor': {}}}",
                options.replication_factor.max(1)
            ),
        )
        .await?;
    }
    for (table, cql) in TABLES {
        if !existing.iter().any(|name| name == table) {
            schema_change(session, cql.replace("{ks}", ks)).await?;
        }
    }
    let has = |table: &str| existing.iter().any(|name| name == table);
    Ok(has("samples") && has("logs"))
}

/// Every statement the store runs, prepared once.
pub(super) struct Statements {
    pub insert_sample_block: PreparedStatement,
    pub insert_log_block: PreparedStatement,
    pub insert_name_slot: PreparedStatement,
    pub insert_slot_name: PreparedStatement,
    pub insert_slot: PreparedStatement,
    pub insert_class: PreparedStatement,
    /// name, day, keep, (start_time, start_seq) > (?, ?), < (?, ?), limit.
    pub sample_blocks_after: PreparedStatement,
    /// As `sample_blocks_after` with `>=`.
    pub sample_blocks_from: PreparedStatement,
    /// day, hour, keep, (start_time, start_seq) > (?, ?), < (?, ?), limit.
    pub log_blocks_after: PreparedStatement,
    /// As `log_blocks_after` with `>=`.
    pub log_blocks_from: PreparedStatement,
    /// name, day, keep, (start_time, start_seq) < (?, ?), newest first, limit.
    pub sample_blocks_before: PreparedStatement,
    pub name_slots: PreparedStatement,
    pub classes: PreparedStatement,
    /// keep, first day, last day.
    pub class_days: PreparedStatement,
    /// keep, last day.
    pub class_days_until: PreparedStatement,
    pub slot_names: PreparedStatement,
    pub delete_sample_blocks: PreparedStatement,
    pub delete_log_blocks: PreparedStatement,
    pub delete_name_slot: PreparedStatement,
    pub delete_slot_names: PreparedStatement,
    pub delete_slot: PreparedStatement,
    /// Set when the keyspace has the row-per-record tables of earlier versions.
    pub legacy: Option<Legacy>,
}

/// The statements on the row-per-record tables of keyspaces written before block rows:
/// read and expired, never written.
pub(super) struct Legacy {
    /// name, day, keep, (time, seq) > (?, ?), (time, seq) < (?, ?), limit.
    pub samples_after: PreparedStatement,
    /// As `samples_after` with `>=`.
    pub samples_from: PreparedStatement,
    /// day, hour, keep, (time, seq) > (?, ?), (time, seq) < (?, ?), limit.
    pub logs_after: PreparedStatement,
    /// As `logs_after` with `>=`.
    pub logs_from: PreparedStatement,
    pub last_sample: PreparedStatement,
    pub delete_samples: PreparedStatement,
    pub delete_logs: PreparedStatement,
}

impl Statements {
    /// Prepares every statement on `keyspace`'s tables (and on the row-per-record tables
    /// when `legacy`).
    pub(super) async fn prepare(
        session: &Session,
        keyspace: &str,
        legacy: bool,
    ) -> Result<Statements, ArchiveError> {
        let prepare = |cql: &str| {
            let cql = cql.replace("{ks}", keyspace);
            async move {
                let mut statement = session
                    .prepare(cql.as_str())
                    .await
                    .map_err(|err| prepare_error(&cql, &err))?;
                // Upserts, deletes of whole partitions and reads: all safe to retry.
                statement.set_is_idempotent(true);
                Ok::<_, ArchiveError>(statement)
            }
        };
        let sample_blocks = "SELECT start_time, start_seq, block FROM {ks}.sample_blocks \
             WHERE name = ? AND day = ? AND keep = ? AND (start_time, start_seq) OP (?, ?) \
             AND (start_time, start_seq) < (?, ?) LIMIT ?";
        let log_blocks = "SELECT start_time, start_seq, block FROM {ks}.log_blocks \
             WHERE day = ? AND hour = ? AND keep = ? AND (start_time, start_seq) OP (?, ?) \
             AND (start_time, start_seq) < (?, ?) LIMIT ?";
        let legacy = if legacy {
            Some(Legacy::prepare(&prepare).await?)
        } else {
            None
        };
        Ok(Statements {
            insert_sample_block: prepare(
                "INSERT INTO {ks}.sample_blocks (name, day, keep, start_time, start_seq, block) \
                 VALUES (?, ?, ?, ?, ?, ?)",
            )
            .await?,
            insert_log_block: prepare(
                "INSERT INTO {ks}.log_blocks (day, hour, keep, start_time, start_seq, block) \
                 VALUES (?, ?, ?, ?, ?, ?)",
            )
            .await?,
            insert_name_slot: prepare(
                "INSERT INTO {ks}.name_slots (name, day, keep) VALUES (?, ?, ?)",
            )
            .await?,
            insert_slot_name: prepare(
                "INSERT INTO {ks}.slot_names (keep, day, name) VALUES (?, ?, ?)",
            )
            .await?,
            insert_slot: prepare("INSERT INTO {ks}.slots (keep, day, source) VALUES (?, ?, ?)")
                .await?,
            insert_class: prepare("INSERT INTO {ks}.classes (part, keep) VALUES (?, ?)").await?,
            sample_blocks_after: prepare(&sample_blocks.replace("OP", ">")).await?,
            sample_blocks_from: prepare(&sample_blocks.replace("OP", ">=")).await?,
            log_blocks_after: prepare(&log_blocks.replace("OP", ">")).await?,
            log_blocks_from: prepare(&log_blocks.replace("OP", ">=")).await?,
            sample_blocks_before: prepare(
                "SELECT start_time, start_seq, block FROM {ks}.sample_blocks \
                 WHERE name = ? AND day = ? AND keep = ? AND (start_time, start_seq) < (?, ?) \
                 ORDER BY start_time DESC, start_seq DESC LIMIT ?",
            )
            .await?,
            name_slots: prepare(
                "SELECT day, keep FROM {ks}.name_slots WHERE name = ? AND day >= ? AND day <= ?",
            )
            .await?,
            classes: prepare("SELECT keep FROM {ks}.classes WHERE part = ?").await?,
            class_days: prepare(
                "SELECT day, source FROM {ks}.slots WHERE keep = ? AND day >= ? AND day <= ?",
            )
            .await?,
            class_days_until: prepare(
                "SELECT day, source FROM {ks}.slots WHERE keep = ? AND day <= ?",
            )
            .await?,
            slot_names: prepare("SELECT name FROM {ks}.slot_names WHERE keep = ? AND day = ?")
                .await?,
            delete_sample_blocks: prepare(
                "DELETE FROM {ks}.sample_blocks WHERE name = ? AND day = ? AND keep = ?",
            )
            .await?,
            delete_log_blocks: prepare(
                "DELETE FROM {ks}.log_blocks WHERE day = ? AND hour = ? AND keep = ?",
            )
            .await?,
            delete_name_slot: prepare(
                "DELETE FROM {ks}.name_slots WHERE name = ? AND day = ? AND keep = ?",
            )
            .await?,
            delete_slot_names: prepare("DELETE FROM {ks}.slot_names WHERE keep = ? AND day = ?")
                .await?,
            delete_slot: prepare("DELETE FROM {ks}.slots WHERE keep = ? AND day = ?").await?,
            legacy,
        })
    }
}

impl Legacy {
    async fn prepare<F, Fut>(prepare: &F) -> Result<Legacy, ArchiveError>
    where
        F: Fn(&str) -> Fut,
        Fut: std::future::Future<Output = Result<PreparedStatement, ArchiveError>>,
    {
        let samples_read = "SELECT time, seq, received, record FROM {ks}.samples \
             WHERE name = ? AND day = ? AND keep = ? AND (time, seq) OP (?, ?) \
             AND (time, seq) < (?, ?) LIMIT ?";
        let logs_read = "SELECT time, seq, priority, received, record FROM {ks}.logs \
             WHERE day = ? AND hour = ? AND keep = ? AND (time, seq) OP (?, ?) \
             AND (time, seq) < (?, ?) LIMIT ?";
        Ok(Legacy {
            samples_after: prepare(&samples_read.replace("OP", ">")).await?,
            samples_from: prepare(&samples_read.replace("OP", ">=")).await?,
            logs_after: prepare(&logs_read.replace("OP", ">")).await?,
            logs_from: prepare(&logs_read.replace("OP", ">=")).await?,
            last_sample: prepare(
                "SELECT time, seq, received, record FROM {ks}.samples \
                 WHERE name = ? AND day = ? AND keep = ? AND time <= ? \
                 ORDER BY time DESC, seq DESC LIMIT 1",
            )
            .await?,
            delete_samples: prepare(
                "DELETE FROM {ks}.samples WHERE name = ? AND day = ? AND keep = ?",
            )
            .await?,
            delete_logs: prepare("DELETE FROM {ks}.logs WHERE day = ? AND hour = ? AND keep = ?")
                .await?,
        })
    }
}
