//! Numbered queues (a cluster route's): every record that enters gets the queue's next
//! number, the far side confirms the numbers it has routed, and a publisher can wait until
//! everything it queued is confirmed — written and routed on the far member, or shed and
//! owed as a gap. That is what lets a member acknowledge a record to its producer only once
//! another member holds it, so that killing the first member loses nothing acknowledged.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use super::{Delivery, DropReason, Drops, Gap, Queue};

/// One drain's worth of records handed to the writer and not yet confirmed.
#[derive(Debug)]
struct Written {
    /// Confirmed once the far side confirms this number (the highest written so far).
    needs: u64,
    /// Then every number up to this one is settled: written and routed, or shed.
    settles: u64,
    /// The connection that wrote them.
    epoch: u64,
    /// The records, as a loss, in case that connection ends before confirming them.
    records: Gap,
}

/// What a numbered queue knows of its numbers.
#[derive(Debug, Default)]
pub(super) struct Confirmations {
    /// The number the next record gets.
    next: u64,
    /// Highest number handed to the writer.
    written: u64,
    /// Highest number the far side confirmed.
    far: u64,
    /// Every number up to this one is settled.
    settled: u64,
    /// The current connection of the queue's writer.
    epoch: u64,
    unconfirmed: VecDeque<Written>,
}

impl Confirmations {
    pub(super) fn new() -> Self {
        Confirmations {
            next: 1,
            ..Confirmations::default()
        }
    }

    /// Numbers `delivery`; returns its number.
    pub(super) fn number(&mut self, delivery: &mut Delivery) -> u64 {
        delivery.seq = self.next;
        self.next += 1;
        delivery.seq
    }

    /// The writer took `drained`; `oldest_left` is the lowest number still queued, if any.
    pub(super) fn drained(&mut self, drained: &[Delivery], oldest_left: Option<u64>) {
        let settles = oldest_left.map_or(self.next - 1, |oldest| oldest - 1);
        let mut records = Gap::default();
        for delivery in drained {
            records.add(delivery);
            self.written = self.written.max(delivery.seq);
        }
        if self.written <= self.far && self.unconfirmed.is_empty() {
            // Nothing in flight: what was shed since is settled at once.
            self.settled = self.settled.max(settles);
            return;
        }
        self.unconfirmed.push_back(Written {
            needs: self.written,
            settles,
            epoch: self.epoch,
            records,
        });
    }

    /// The far side routed everything up to `through`.
    pub(super) fn confirm(&mut self, through: u64) {
        self.far = self.far.max(through);
        while let Some(front) = self.unconfirmed.front() {
            if front.needs > self.far {
                break;
            }
            self.settled = self.settled.max(front.settles);
            self.unconfirmed.pop_front();
        }
    }

    /// A new connection drains the queue from now on.
    pub(super) fn reconnected(&mut self) {
        self.epoch += 1;
    }

    /// The records written by earlier connections and still unconfirmed after the current
    /// connection's first confirmation are lost: settles them and returns them as a gap.
    pub(super) fn lose_earlier(&mut self) -> Gap {
        let mut lost = Gap::default();
        let epoch = self.epoch;
        while let Some(front) = self.unconfirmed.front() {
            if front.epoch >= epoch {
                break;
            }
            self.settled = self.settled.max(front.settles);
            lost.merge(&front.records);
            self.unconfirmed.pop_front();
        }
        lost
    }

    /// Every number up to this one is settled.
    pub(super) fn settled(&self) -> u64 {
        self.settled
    }
}

impl Queue {
    /// A numbered queue's far side routed every record up to number `through`.
    pub fn confirm(&self, through: u64) {
        let mut inner = self.lock();
        if let Some(confirm) = &mut inner.confirm {
            confirm.confirm(through);
            let settled = confirm.settled();
            drop(inner);
            self.publish_settled(settled);
        }
    }

    /// A numbered queue is drained by a new connection from now on; waits for settlement
    /// wait again.
    pub fn reconnected(&self) {
        if let Some(confirm) = &mut self.lock().confirm {
            confirm.reconnected();
        }
        self.released.store(false, Ordering::Release);
    }

    /// After the new connection's first confirmation: what earlier connections wrote and
    /// the far side never confirmed is lost. Counts it (reason `closed`), owes the far side
    /// a gap notice for it, and returns how many records that was.
    pub fn lose_unconfirmed(&self) -> u64 {
        let mut inner = self.lock();
        let Some(confirm) = &mut inner.confirm else {
            return 0;
        };
        let lost = confirm.lose_earlier();
        let settled = confirm.settled();
        inner.gap.merge(&lost);
        drop(inner);
        self.publish_settled(settled);
        if lost.count > 0 {
            let mut drops = Drops::default();
            drops.add(DropReason::Closed, lost.count);
            self.drops.add(&drops);
            self.writer.notify_one();
        }
        lost.count
    }

    /// Lets every wait for settlement end at once while `released` (the route is down: a
    /// producer is not held up by a member that cannot answer; what stays queued flows when
    /// the route is back).
    pub fn release(&self, released: bool) {
        self.released.store(released, Ordering::Release);
        self.settle.notify_waiters();
    }

    /// Waits until every record up to `number` of this numbered queue is settled: written
    /// and routed by the far side, or shed (and owed as a gap) — or until the queue is
    /// released.
    pub async fn wait_settled(&self, number: u64) {
        loop {
            let notified = self.settle.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.settled.load(Ordering::Acquire) >= number
                || self.released.load(Ordering::Acquire)
            {
                return;
            }
            notified.await;
        }
    }

    pub(super) fn publish_settled(&self, settled: u64) {
        if self.settled.fetch_max(settled, Ordering::AcqRel) < settled {
            self.settle.notify_waiters();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use herald_proto::Priority;

    fn numbered(confirm: &mut Confirmations) -> Delivery {
        let mut delivery = Delivery {
            seq: 0,
            received: 0,
            priority: Priority::Info,
            record: Bytes::from_static(b"x"),
            subject: (0, 0),
            producer: 0,
            pseq: 0,
            groups: None,
        };
        confirm.number(&mut delivery);
        delivery
    }

    #[test]
    fn settles_only_what_the_far_side_confirmed() {
        let mut confirm = Confirmations::new();
        let batch: Vec<Delivery> = (0..3).map(|_| numbered(&mut confirm)).collect();
        confirm.drained(&batch[..2], Some(3));
        assert_eq!(confirm.settled(), 0);
        confirm.confirm(1);
        assert_eq!(confirm.settled(), 0, "number 2 is still in flight");
        confirm.confirm(2);
        assert_eq!(confirm.settled(), 2, "number 3 is still queued");
        confirm.drained(&batch[2..], None);
        confirm.confirm(3);
        assert_eq!(confirm.settled(), 3);
    }

    #[test]
    fn shed_records_settle_with_the_next_confirmation() {
        let mut confirm = Confirmations::new();
        let first = numbered(&mut confirm);
        let _shed = numbered(&mut confirm);
        confirm.drained(std::slice::from_ref(&first), None);
        assert_eq!(confirm.settled(), 0);
        confirm.confirm(1);
        assert_eq!(
            confirm.settled(),
            2,
            "number 2 was shed: settled with number 1"
        );
        let _shed_later = numbered(&mut confirm);
        confirm.drained(&[], None);
        assert_eq!(confirm.settled(), 3, "nothing in flight: settled at once");
    }

    #[test]
    fn a_broken_connection_loses_what_it_had_in_flight() {
        let mut confirm = Confirmations::new();
        let batch: Vec<Delivery> = (0..4).map(|_| numbered(&mut confirm)).collect();
        confirm.drained(&batch[..2], Some(3));
        confirm.drained(&batch[2..], None);
        confirm.reconnected();
        // The far side had routed number 2 before the connection broke.
        confirm.confirm(2);
        let lost = confirm.lose_earlier();
        assert_eq!((lost.count, lost.first_seq, lost.last_seq), (2, 3, 4));
        assert_eq!(confirm.settled(), 4);
    }
}
