//! What the background side does with a disk buffer (python/README.md, "Disk buffer", is
//! the shared design): while no server answers, it moves every record from the memory
//! buffer to disk, each tick; once one answers, it sends the disk's records first, a step
//! at a time, oldest first, under their own numbers (moving the memory buffer to disk
//! meanwhile when it is half full, so that it does not fill), and only then new records
//! straight from memory. Drop reports made while records wait on disk go on disk after
//! them, so they arrive in order and survive a restart too.

use std::time::{Duration, Instant};

use herald_proto::frame;
use herald_proto::Frame;

use super::drops::DropReason;
use super::spool::replay::replay_step;
use super::spool::{on_disk, DiskLoss, REPORT_RANK};
use super::worker::{CloseAck, Drain};

/// Records handed to the disk buffer at once (its quota sheds within such a batch).
const SPILL_BATCH_RECORDS: usize = 512;
/// Room made on disk for a drop report: more than one takes (about 400 bytes with every
/// priority and reason in it).
const REPORT_ROOM_BYTES: usize = 1024;
/// How often a closing logger looks whether its own connection is up.
const CONNECT_POLL: Duration = Duration::from_millis(10);
/// Longest wait for the acknowledgement of one replay step.
const REPLAY_ACK_TIMEOUT: Duration = Duration::from_secs(5);

impl Drain {
    /// One wake-up with a disk buffer; returns true while the disk has more to send now (not
    /// after a step that failed: the next tick tries again, rather than at once and forever
    /// while the disk cannot be read or the server refuses).
    pub(super) async fn spooled_step(&mut self, subject: &str, interval: Option<Duration>) -> bool {
        let up = self.link.is_up().await;
        self.salvage();
        if !up {
            self.spill_all(subject, interval).await;
            return false;
        }
        if self.disk_pending() {
            if self.shared.buffer.half_full() {
                self.spill_all(subject, interval).await;
            }
            let acknowledged = self.replay(REPLAY_ACK_TIMEOUT).await;
            if self.disk_pending() {
                // Memory waits for the disk: records go out in the order they were logged.
                return acknowledged;
            }
        }
        self.drain().await;
        self.absorb_disk_losses();
        self.report_drops(subject, interval);
        false
    }

    /// Moves everything the memory buffer holds to disk, a drop report after it.
    async fn spill_all(&mut self, subject: &str, interval: Option<Duration>) {
        self.spilling = true;
        self.drain().await;
        self.write_spilled();
        self.report_drops(subject, interval);
        self.spilling = false;
        self.write_spilled();
    }

    /// Appends the records encoded for the disk buffer, and counts what it lost.
    fn write_spilled(&mut self) {
        let Some(spool) = self.spool.as_mut() else {
            return;
        };
        let mut spilled = std::mem::take(&mut self.spilled);
        while !spilled.is_empty() {
            let rest = spilled.split_off(spilled.len().min(SPILL_BATCH_RECORDS));
            on_disk(|| spool.append(spilled));
            spilled = rest;
        }
        self.absorb_disk_losses();
        self.disk_pending();
    }

    /// Makes room on disk for a drop report (at most [`REPORT_ROOM_BYTES`]), shedding the
    /// lowest priority there whatever it is, and counts what that shed, so that the report,
    /// appended next, sheds nothing it does not say. A disk full of ERRORs still takes it:
    /// the counts it carries are worth more than the record shed for it, which it counts.
    pub(super) fn make_room_for_report(&mut self) {
        if let Some(spool) = self.spool.as_mut() {
            on_disk(|| spool.make_room(REPORT_RANK, REPORT_ROOM_BYTES));
        }
        self.absorb_disk_losses();
    }

    /// Sends one step of the disk buffer, at most `timeout` waiting for its acknowledgement;
    /// returns whether it was acknowledged.
    async fn replay(&mut self, timeout: Duration) -> bool {
        let (Some(client), Some(spool)) = (self.link.current(), self.spool.as_mut()) else {
            return false;
        };
        let client = client.clone();
        let step = replay_step(&client, spool, timeout).await;
        for priority in step.rejected {
            self.shared
                .drops
                .count_slot(usize::from(priority), DropReason::Rejected, 1);
        }
        self.absorb_disk_losses();
        step.acknowledged
    }

    /// Moves the disk buffer's losses into the logger's drop counts (and so its reports).
    fn absorb_disk_losses(&mut self) {
        let Some(spool) = self.spool.as_mut() else {
            return;
        };
        let losses = spool.take_losses();
        let reasons = [
            (DiskLoss::Quota, DropReason::DiskQuota),
            (DiskLoss::Torn, DropReason::DiskTorn),
            (DiskLoss::Error, DropReason::DiskError),
        ];
        for (loss, reason) in reasons {
            for (slot, count) in losses[loss as usize].iter().enumerate() {
                self.shared.drops.count_slot(slot, reason, *count);
            }
        }
    }

    /// Returns (and tells the handles) whether the disk holds records not acknowledged.
    fn disk_pending(&self) -> bool {
        let pending = self.spool.as_ref().is_some_and(|s| s.pending());
        let state = &self.link.state;
        state
            .disk_pending
            .store(pending, std::sync::atomic::Ordering::Release);
        pending
    }

    /// Puts what the client sent and no server acknowledged in front of the disk buffer
    /// (closing during an outage), under the numbers it was sent with.
    fn keep_unacknowledged(&mut self) {
        if let Some(client) = self.link.current() {
            let frames = client.take_unacknowledged();
            self.keep_frames(frames);
        }
    }

    /// Takes what own connections that gave up held without an acknowledgement: in front of
    /// the disk buffer when there is one, else counted as lost (`closed`), by priority.
    pub(super) fn salvage(&mut self) {
        for client in self.link.take_failed() {
            let frames = client.take_unacknowledged();
            self.keep_frames(frames);
        }
    }

    /// Counts the records of `PUBLISH` frames that can go nowhere as lost, by priority (a
    /// frame that does not read back, none should, as one record of unknown priority).
    fn count_lost_frames(&self, frames: &[bytes::Bytes]) {
        for frame in frames {
            let body = frame.slice(frame::LENGTH_BYTES.min(frame.len())..);
            match Frame::decode(body) {
                Ok(Frame::Publish(publish)) => {
                    for record in &publish.records {
                        self.shared
                            .drops
                            .count(record.meta.priority, DropReason::Closed);
                    }
                }
                _ => self.shared.drops.count_slot(0, DropReason::Closed, 1),
            }
        }
    }

    /// Puts the `PUBLISH` frames `frames` in front of the disk buffer, under the numbers
    /// they were sent with; a frame that does not read back (none should) is counted as lost,
    /// and so is every frame when there is no disk buffer.
    fn keep_frames(&mut self, frames: Vec<bytes::Bytes>) {
        let Some(spool) = self.spool.as_mut() else {
            return self.count_lost_frames(&frames);
        };
        let mut entries = Vec::new();
        let mut unreadable = 0;
        for frame in frames {
            let body = frame.slice(frame::LENGTH_BYTES.min(frame.len())..);
            match Frame::decode(body) {
                Ok(Frame::Publish(publish)) if publish.seqs.len() == publish.records.len() => {
                    entries.extend(
                        publish
                            .seqs
                            .iter()
                            .zip(&publish.records)
                            .map(|(seq, r)| (*seq, rank(r), r.bytes.to_vec())),
                    );
                }
                Ok(Frame::Publish(publish)) => unreadable += publish.records.len() as u64,
                _ => unreadable += 1,
            }
        }
        if !entries.is_empty() {
            on_disk(|| spool.prepend(entries));
        }
        self.shared
            .drops
            .count_slot(0, DropReason::DiskError, unreadable);
        self.absorb_disk_losses();
    }

    /// Closes with a disk buffer: sends what the disk holds while a server answers (within
    /// the close's time), then what is in memory; what cannot go now stays on disk, for the
    /// next start. The directory is let go before the close is answered.
    pub(super) async fn spooled_close(mut self, subject: &str, ack: CloseAck, timeout: Duration) {
        let timeout = match &ack {
            CloseAck::Blocking { flush_timeout, .. } => *flush_timeout,
            CloseAck::Async(_) => timeout,
        };
        let deadline = Instant::now() + timeout;
        // A logger that connects itself may be connecting (or failing over) as it closes:
        // what it holds goes to a server if one answers within the close's time.
        while self.link.connects_itself() && !self.link.is_up().await && Instant::now() < deadline {
            tokio::time::sleep(CONNECT_POLL).await;
        }
        while self.disk_pending() && self.link.is_up().await && Instant::now() < deadline {
            let left = deadline.saturating_duration_since(Instant::now());
            if !self.replay(left).await {
                tokio::time::sleep(CONNECT_POLL).await; // not in a tight loop on refusals
            }
        }
        let live = !self.disk_pending() && self.link.is_up().await;
        self.salvage();
        if !live {
            self.keep_unacknowledged();
        }
        self.spilling = !live;
        self.drain().await;
        self.finish_storms();
        self.write_spilled();
        self.report_drops(subject, None);
        self.spilling = false;
        self.write_spilled();
        // What went to the server must be acknowledged before the directory is let go: what
        // is not by the deadline (the server stopped answering) stays on disk too.
        let left = deadline.saturating_duration_since(Instant::now());
        let flushed = match self.link.current() {
            Some(client) if live => client.flush(left).await,
            _ => Ok(()),
        };
        if let Err(error) = flushed {
            tracing::debug!(%error, "herald logger could not flush on close; what was not acknowledged stays on disk");
            self.keep_unacknowledged();
        }
        if let Some(mut spool) = self.spool.take() {
            on_disk(|| spool.close());
        }
        match ack {
            CloseAck::Async(reply) => {
                let _ = reply.send(());
            }
            CloseAck::Blocking { done, .. } => {
                let _ = done.send(());
            }
        }
    }
}

/// The rank a record sent and not acknowledged goes back on disk with: a drop report's
/// [`REPORT_RANK`], as when it was first put there, else its priority.
fn rank(record: &herald_proto::frame::RawRecord) -> u8 {
    if record.type_name() == super::DROP_REPORT_TYPE {
        REPORT_RANK
    } else {
        record.meta.priority as u8
    }
}
