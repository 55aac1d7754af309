//! What the async side works with: the session, the prepared statements, the index rows
//! written so far, and the one way rows are read.

use std::collections::HashSet;
use std::sync::Mutex;

use scylla::client::execution_profile::ExecutionProfile;
use scylla::client::session::Session;
use scylla::client::session_builder::SessionBuilder;
use scylla::deserialize::row::DeserializeRow;
use scylla::response::query_result::QueryResult;
use scylla::statement::prepared::PreparedStatement;

use super::errors::{execution_error, rows_error, session_error};
use super::options::CqlOptions;
use super::schema::{self, Statements};
use crate::entry::Table;
use crate::error::ArchiveError;
use crate::keep::Keep;

/// What the async side works with.
pub(super) struct Store {
    pub(super) session: Session,
    pub(super) statements: Statements,
    /// Index rows this process has written (or found written).
    pub(super) registered: Mutex<HashSet<Registered>>,
}

impl Store {
    pub(super) async fn connect(options: &CqlOptions) -> Result<Store, ArchiveError> {
        let profile = ExecutionProfile::builder()
            .consistency(options.consistency.driver())
            .request_timeout(Some(options.request_timeout))
            .build();
        let session = SessionBuilder::new()
            .known_nodes(&options.contact_points)
            .keyspaces_to_fetch([options.keyspace.to_lowercase()])
            .default_execution_profile_handle(profile.into_handle())
            .build()
            .await
            .map_err(|err| session_error(&options.contact_points, err))?;
        let legacy = schema::create(&session, options).await?;
        let statements = Statements::prepare(&session, &options.keyspace, legacy).await?;
        Ok(Store {
            session,
            statements,
            registered: Mutex::new(HashSet::new()),
        })
    }
}

/// An index entry, as remembered once written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(super) enum Registered {
    /// `name_slots` and `slot_names` rows of a name in a slot.
    Name { name: String, day: i32, keep: Keep },
    /// The `slots` row of a slot holding rows of `table`.
    Slot { keep: Keep, day: i32, table: Table },
    /// The `classes` row of a retention class.
    Class(Keep),
}

impl Registered {
    pub(super) fn day(&self) -> Option<i32> {
        match self {
            Registered::Name { day, .. } | Registered::Slot { day, .. } => Some(*day),
            Registered::Class(_) => None,
        }
    }

    /// Returns whether this entry belongs to the slot (`keep`, `day`).
    pub(super) fn in_slot(&self, slot_keep: Keep, slot_day: i32) -> bool {
        match self {
            Registered::Name { day, keep, .. } | Registered::Slot { keep, day, .. } => {
                (*keep, *day) == (slot_keep, slot_day)
            }
            Registered::Class(_) => false,
        }
    }
}

/// Runs `statement` and returns its rows as `R`s.
pub(super) async fn select<R>(
    store: &Store,
    statement: &PreparedStatement,
    values: impl scylla::serialize::row::SerializeRow,
    what: &str,
) -> Result<Vec<R>, ArchiveError>
where
    R: for<'frame, 'metadata> DeserializeRow<'frame, 'metadata>,
{
    let result: QueryResult = store
        .session
        .execute_unpaged(statement, values)
        .await
        .map_err(|err| execution_error(what, &err))?;
    let rows = result
        .into_rows_result()
        .map_err(|err| rows_error(what, err))?;
    let rows = rows
        .rows::<R>()
        .map_err(|err| rows_error(what, err))?
        .collect::<Result<Vec<R>, _>>()
        .map_err(|err| rows_error(what, err));
    rows
}
