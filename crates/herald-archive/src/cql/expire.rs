//! Expiry: every (class, day) past its retention loses its partitions — the sample blocks
//! partition of each name written that day (listed in `slot_names`) and the day's 24 log
//! block partitions, and the same partitions of the row-per-record tables where the
//! keyspace has them — then its index rows. Data goes first, so an interrupted expiry leaves index
//! rows that the next one follows again, never data that nothing leads to.

use std::collections::BTreeMap;

use futures_util::stream::{self, StreamExt, TryStreamExt};
use scylla::response::PagingState;
use std::ops::ControlFlow;

use super::errors::{execution_error, lock, rows_error};
use super::schema::{keep_of, keep_value, CLASSES_PART};
use super::store::{select, Store};
use super::write::IN_FLIGHT;
use crate::backend::{Expired, Slot};
use crate::entry::{day_of, Table};
use crate::error::ArchiveError;

/// Names read per page from `slot_names`.
const NAMES_PAGE: i32 = 5_000;

/// Drops every slot past its retention at `now`.
pub(super) async fn expire(store: &Store, now: i64) -> Result<Expired, ArchiveError> {
    let statements = &store.statements;
    let classes: Vec<(i64,)> =
        select(store, &statements.classes, (CLASSES_PART,), "classes").await?;
    let mut expired = Expired::default();
    for (keep,) in classes {
        // A slot has expired once its day ended `keep` ago: no later day can have.
        let last_day = day_of(now.saturating_sub(keep_of(keep).as_nanos()));
        let values = (keep, last_day);
        let days: Vec<(i32, String)> = select(
            store,
            &statements.class_days_until,
            values,
            "a class's days",
        )
        .await?;
        let mut by_day: BTreeMap<i32, Vec<String>> = BTreeMap::new();
        for (day, source) in days {
            by_day.entry(day).or_default().push(source);
        }
        for (day, sources) in by_day {
            let slot = Slot {
                day,
                keep: keep_of(keep),
            };
            if slot.expired(now) {
                drop_slot(store, slot, &sources).await?;
                expired.slots += 1;
            }
        }
    }
    Ok(expired)
}

/// Deletes the partitions of `slot` holding the tables named in `sources`, then its index.
async fn drop_slot(store: &Store, slot: Slot, sources: &[String]) -> Result<(), ArchiveError> {
    let (session, statements) = (&store.session, &store.statements);
    let (day, keep) = (slot.day, keep_value(slot.keep));
    let has = |table: Table| sources.iter().any(|s| s == table.name());
    if has(Table::Samples) {
        let names = slot_names(store, slot).await?;
        stream::iter(&names)
            .map(|name| async move {
                session
                    .execute_unpaged(&statements.delete_sample_blocks, (name, day, keep))
                    .await?;
                if let Some(legacy) = &statements.legacy {
                    session
                        .execute_unpaged(&legacy.delete_samples, (name, day, keep))
                        .await?;
                }
                session
                    .execute_unpaged(&statements.delete_name_slot, (name, day, keep))
                    .await
            })
            .buffer_unordered(IN_FLIGHT)
            .try_for_each(|_| async { Ok(()) })
            .await
            .map_err(|err| execution_error("deleting samples", &err))?;
    }
    if has(Table::Logs) {
        let legacy = statements.legacy.as_ref().map(|legacy| &legacy.delete_logs);
        let deletes = [Some(&statements.delete_log_blocks), legacy];
        let partitions = deletes
            .into_iter()
            .flatten()
            .flat_map(|statement| (0..24).map(move |hour| (statement, hour)));
        stream::iter(partitions)
            .map(|(statement, hour)| session.execute_unpaged(statement, (day, hour, keep)))
            .buffer_unordered(IN_FLIGHT)
            .try_for_each(|_| async { Ok(()) })
            .await
            .map_err(|err| execution_error("deleting logs", &err))?;
    }
    for statement in [&statements.delete_slot_names, &statements.delete_slot] {
        session
            .execute_unpaged(statement, (keep, day))
            .await
            .map_err(|err| execution_error("deleting a slot's index", &err))?;
    }
    lock(&store.registered).retain(|entry| !entry.in_slot(slot.keep, slot.day));
    Ok(())
}

/// Returns the names with samples in `slot`, page by page.
async fn slot_names(store: &Store, slot: Slot) -> Result<Vec<String>, ArchiveError> {
    let mut statement = store.statements.slot_names.clone();
    statement.set_page_size(NAMES_PAGE);
    let values = (keep_value(slot.keep), slot.day);
    let mut names = Vec::new();
    let mut paging = PagingState::start();
    loop {
        let (result, next) = store
            .session
            .execute_single_page(&statement, values, paging)
            .await
            .map_err(|err| execution_error("listing a slot's names", &err))?;
        let rows = result
            .into_rows_result()
            .map_err(|err| rows_error("slot_names", err))?;
        for row in rows
            .rows::<(String,)>()
            .map_err(|err| rows_error("slot_names", err))?
        {
            names.push(row.map_err(|err| rows_error("slot_names", err))?.0);
        }
        match next.into_paging_control_flow() {
            ControlFlow::Continue(state) => paging = state,
            ControlFlow::Break(()) => return Ok(names),
        }
    }
}
