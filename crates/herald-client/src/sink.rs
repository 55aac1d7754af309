//! The reader's end of a subscription: the connection hands it batches of events, bounded
//! in events, and what does not fit becomes a gap notice here.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_proto::frame::GapNotice;
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::Priority;
use tokio::sync::mpsc;

use crate::event::Event;
use crate::sync::lock;

/// State shared between a subscription and the connection's reader.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub(crate) received: AtomicU64,
    pub(crate) lost: AtomicU64,
    /// Events handed over and not yet taken by the subscriber.
    pub(crate) queued: AtomicUsize,
    /// Records dropped by the client because the subscription's buffer was full, not yet
    /// reported in the stream. The reader reports it before its next batch; the subscriber
    /// takes it once it has emptied the buffer, so it is never left behind.
    pub(crate) gap: Mutex<Option<LocalGap>>,
    /// Signalled when the subscriber takes a batch, for a reader waiting for room.
    pub(crate) space: tokio::sync::Notify,
}

/// Records this client lost for one subscription, counted without allocating per record.
#[derive(Debug)]
pub(crate) struct LocalGap {
    subscription: u64,
    count: u64,
    first_seq: u64,
    last_seq: u64,
    by_priority: [u64; 12],
}

impl LocalGap {
    fn add(&mut self, subscription: u64, count: u64, first_seq: u64, last_seq: u64) {
        if self.count == 0 {
            (self.subscription, self.first_seq, self.last_seq) =
                (subscription, first_seq, last_seq);
        }
        self.count += count;
        self.first_seq = self.first_seq.min(first_seq);
        self.last_seq = self.last_seq.max(last_seq);
    }

    pub(crate) fn into_notice(self) -> GapNotice {
        let by_priority = ALL_PRIORITIES
            .into_iter()
            .map(|p: Priority| (p, self.by_priority[p as usize]))
            .filter(|(_, c)| *c > 0)
            .collect();
        GapNotice {
            subscription: self.subscription,
            count: self.count,
            first_seq: self.first_seq,
            last_seq: self.last_seq,
            by_priority,
            member: None,
        }
    }
}

/// The reader's end of a subscription: batches of events, bounded in events.
#[derive(Debug, Clone)]
pub(crate) struct Sink {
    events: mpsc::UnboundedSender<Vec<Event>>,
    counters: Arc<Counters>,
    limit: usize,
}

impl Sink {
    pub(crate) fn new(
        events: mpsc::UnboundedSender<Vec<Event>>,
        counters: Arc<Counters>,
        limit: usize,
    ) -> Self {
        Sink {
            events,
            counters,
            limit,
        }
    }

    /// Hands a batch to the subscriber, waiting at most `patience` for room first. While the
    /// reader waits it reads nothing, so the socket backs up and the server's queue for this
    /// subscriber sheds — cheaply, at the source — instead of this client dropping records
    /// the server already sent. Past `patience`, what does not fit becomes a gap here.
    pub(crate) async fn offer_patiently(&mut self, batch: Vec<Event>, patience: Duration) {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let space = self.counters.space.notified();
            tokio::pin!(space);
            space.as_mut().enable();
            let room = self
                .limit
                .saturating_sub(self.counters.queued.load(Ordering::Acquire));
            if room >= batch.len() || batch.len() > self.limit {
                break;
            }
            if tokio::time::timeout_at(deadline, space).await.is_err() {
                break;
            }
        }
        self.offer(batch);
    }

    /// Hands a batch to the subscriber without ever waiting. What does not fit the buffer
    /// becomes a gap, reported in order before anything that comes later.
    pub(crate) fn offer(&mut self, mut batch: Vec<Event>) {
        for event in &batch {
            if let Event::Gap(gap) = event {
                self.counters.lost.fetch_add(gap.count, Ordering::Relaxed);
            }
        }
        let mut pending = lock(&self.counters.gap);
        let room = self
            .limit
            .saturating_sub(self.counters.queued.load(Ordering::Acquire));
        if room > 0 {
            if let Some(gap) = pending.take() {
                batch.insert(0, Event::Gap(gap.into_notice()));
            }
        }
        if batch.len() > room {
            let gap = pending.get_or_insert(LocalGap {
                subscription: 0,
                count: 0,
                first_seq: 0,
                last_seq: 0,
                by_priority: [0; 12],
            });
            for event in batch.drain(room..) {
                self.lose(event, gap);
            }
        }
        drop(pending);
        if batch.is_empty() {
            return;
        }
        self.counters
            .queued
            .fetch_add(batch.len(), Ordering::AcqRel);
        // A send error means the subscription was dropped; nobody is left to tell.
        let _ = self.events.send(batch);
    }

    /// Adds `event` to the pending gap (a record counts as one lost record).
    fn lose(&self, event: Event, gap: &mut LocalGap) {
        match event {
            Event::Gap(notice) => {
                gap.add(
                    notice.subscription,
                    notice.count,
                    notice.first_seq,
                    notice.last_seq,
                );
                for (priority, count) in notice.by_priority {
                    gap.by_priority[priority as usize] += count;
                }
            }
            Event::Record(delivered) => {
                self.counters.lost.fetch_add(1, Ordering::Relaxed);
                gap.add(delivered.subscription, 1, delivered.seq, delivered.seq);
                gap.by_priority[delivered.priority() as usize] += 1;
            }
            // The buffer's own gap notice stands for it.
            Event::Interrupted(_) => {}
        }
    }
}
