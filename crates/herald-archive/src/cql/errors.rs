//! Errors of the driver as the archive's errors: unreachable nodes and timeouts are
//! `Unavailable` (the caller retries), the rest `Io`; rows not as expected are `Corrupt`.

use std::sync::{Mutex, MutexGuard};

use scylla::errors::{DbError, ExecutionError, NewSessionError, PrepareError, RequestAttemptError};

use crate::error::{ArchiveError, ArchiveErrorKind};

/// Locks `mutex`, whatever a panic left in it.
pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Whether a failed attempt means the cluster cannot serve now (so the caller retries).
fn attempt_unavailable(err: &RequestAttemptError) -> bool {
    match err {
        RequestAttemptError::UnableToAllocStreamId
        | RequestAttemptError::BrokenConnectionError(_) => true,
        RequestAttemptError::DbError(db, _) => matches!(
            db,
            DbError::Unavailable { .. }
                | DbError::Overloaded
                | DbError::IsBootstrapping
                | DbError::ReadTimeout { .. }
                | DbError::WriteTimeout { .. }
                | DbError::RateLimitReached { .. }
        ),
        _ => false,
    }
}

fn prepare_unavailable(err: &PrepareError) -> bool {
    match err {
        PrepareError::ConnectionPoolError(_) => true,
        PrepareError::AllAttemptsFailed { first_attempt } => attempt_unavailable(first_attempt),
        _ => false,
    }
}

fn kind(unavailable: bool) -> ArchiveErrorKind {
    if unavailable {
        ArchiveErrorKind::Unavailable
    } else {
        ArchiveErrorKind::Io
    }
}

/// Maps a failed request: unreachable nodes and timeouts are `Unavailable`, the rest `Io`.
pub(super) fn execution_error(what: &str, err: &ExecutionError) -> ArchiveError {
    let unavailable = match err {
        ExecutionError::EmptyPlan
        | ExecutionError::ConnectionPoolError(_)
        | ExecutionError::RequestTimeout(_)
        | ExecutionError::SchemaAgreementError(_)
        | ExecutionError::MetadataError(_) => true,
        ExecutionError::LastAttemptError(attempt) => attempt_unavailable(attempt),
        ExecutionError::PrepareError(prepare) => prepare_unavailable(prepare),
        _ => false,
    };
    ArchiveError::new(kind(unavailable), format!("cassandra: {what}: {err}"))
}

pub(super) fn prepare_error(statement: &str, err: &PrepareError) -> ArchiveError {
    ArchiveError::new(
        kind(prepare_unavailable(err)),
        format!("cassandra: preparing `{statement}`: {err}"),
    )
}

pub(super) fn session_error(contact_points: &[String], err: NewSessionError) -> ArchiveError {
    let unavailable = matches!(
        err,
        NewSessionError::MetadataError(_) | NewSessionError::FailedToResolveAnyHostname(_)
    );
    ArchiveError::new(
        kind(unavailable),
        format!(
            "cassandra: connecting to {}: {err}",
            contact_points.join(", ")
        ),
    )
}

/// Rows that do not have the columns and types asked for.
pub(super) fn rows_error(what: &str, err: impl std::fmt::Display) -> ArchiveError {
    ArchiveError::new(
        ArchiveErrorKind::Corrupt,
        format!("cassandra: reading {what}: {err}"),
    )
}
