//! Sending what the disk buffer holds, oldest first, under the numbers the records got when
//! they went to disk, one step at a time: read about [`STEP_BYTES`], send them in `PUBLISH`
//! frames of consecutive numbers (a gap in the numbers, left by shedding or by records sent
//! straight from memory, starts a new frame), wait for the server's acknowledgement, then
//! tell the buffer how far it got (which deletes the segments sent and writes `state`).
//!
//! A step the server does not acknowledge (the connection was lost, or the acknowledgement
//! is late) is read again from disk next time. The client also sends its unacknowledged
//! frames again after a failover, so those records may reach the server twice, under the
//! same producer id and numbers, and the server drops the second copy (docs/protocol.md,
//! Numbered records).

use std::time::Duration;

use super::{on_disk, Spool};
use crate::Client;

/// Bytes read from disk and sent per step (one wait for an acknowledgement each).
pub(crate) const STEP_BYTES: u64 = 1024 * 1024;
/// The most record bytes in one `PUBLISH` frame of a step (half the server's limit at most).
const FRAME_BYTES: usize = 256 * 1024;
/// Room a `PUBLISH` frame needs besides its records (the client's outbox keeps as much).
const FRAME_OVERHEAD_BYTES: usize = 41;

/// What one step did.
#[derive(Debug, Default)]
pub(crate) struct Step {
    /// True if the server acknowledged it (the buffer forgot it).
    pub(crate) acknowledged: bool,
    /// Priorities of records larger than the server takes: lost, never sent.
    pub(crate) rejected: Vec<u8>,
}

/// Cuts `records` (number, priority, bytes; numbers rising) into frames of consecutive
/// numbers and at most `limit` bytes (a larger record alone): (first number, records).
pub(crate) fn runs(records: &[(u64, u8, Vec<u8>)], limit: usize) -> Vec<(u64, Vec<&[u8]>)> {
    let mut frames: Vec<(u64, Vec<&[u8]>)> = Vec::new();
    let mut expected = 0;
    let mut size = 0;
    for (seq, _, record) in records {
        let fits = size + record.len() <= limit;
        match frames.last_mut() {
            Some((_, batch)) if *seq == expected && fits => batch.push(record),
            _ => {
                frames.push((*seq, vec![record.as_slice()]));
                size = 0;
            }
        }
        size += record.len();
        expected = seq + 1;
    }
    frames
}

/// Sends the next step of the disk buffer through `client` and waits at most `timeout` for
/// its acknowledgement.
pub(crate) async fn replay_step(client: &Client, spool: &mut Spool, timeout: Duration) -> Step {
    let mut step = Step::default();
    let read = on_disk(|| {
        let records = spool.read(STEP_BYTES)?;
        if !records.is_empty() {
            return Ok(records);
        }
        spool.rewind(); // a shed moved things, or everything is acknowledged
        spool.read(STEP_BYTES)
    });
    let records = match read {
        Ok(records) => records,
        Err(error) => {
            tracing::warn!(%error, "herald disk buffer cannot read; trying again");
            spool.rewind();
            return step;
        }
    };
    let Some(last) = records.last().map(|(seq, ..)| *seq) else {
        // Nothing readable is left though the buffer says otherwise (its files were
        // changed under it): forget it rather than look again and again.
        let through = spool.last_seq();
        on_disk(|| spool.acknowledge(through));
        step.acknowledged = true;
        return step;
    };
    let max_frame = client.max_frame_bytes();
    let largest = max_frame.saturating_sub(FRAME_OVERHEAD_BYTES);
    let (sendable, rejected): (Vec<_>, Vec<_>) = records
        .into_iter()
        .partition(|(_, _, r)| r.len() <= largest);
    step.rejected = rejected.iter().map(|(_, priority, _)| *priority).collect();
    let frames = runs(&sendable, FRAME_BYTES.min(max_frame / 2));
    if !frames.is_empty() {
        if let Err(error) = client.publish_numbered(&frames, timeout).await {
            tracing::debug!(%error, "herald disk buffer replay not acknowledged; trying again");
            spool.rewind();
            return step;
        }
    }
    on_disk(|| spool.acknowledge(last));
    step.acknowledged = true;
    step
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_break_at_gaps_in_the_numbers_and_at_the_size_limit() {
        let record = |seq: u64, size: usize| (seq, 4, vec![0u8; size]);
        let records = [
            record(5, 10),
            record(6, 10),
            record(8, 10),
            record(9, 30),
            record(10, 10),
        ];
        let cut: Vec<(u64, usize)> = runs(&records, 40)
            .iter()
            .map(|(first, batch)| (*first, batch.len()))
            .collect();
        assert_eq!(cut, [(5, 2), (8, 2), (10, 1)]);
        let big = [record(1, 100)];
        let alone = runs(&big, 40);
        assert_eq!(alone.len(), 1, "a record over the limit goes alone");
    }
}
