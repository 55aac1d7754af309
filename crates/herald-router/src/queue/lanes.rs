//! Queued records kept in one lane per priority, each in sequence order, so that shedding
//! the lowest priority is O(1) and the writer still sends records in sequence order.

use std::collections::VecDeque;

use herald_proto::Priority;

use super::Delivery;

/// Which end of a lane to evict from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The oldest record of the lane.
    Oldest,
    /// The newest record of the lane.
    Newest,
}

/// Per-priority lanes with their totals.
#[derive(Debug, Default)]
pub struct Lanes {
    lanes: [VecDeque<Delivery>; 12],
    /// Bit n set when lane n is not empty.
    occupied: u16,
    records: usize,
    bytes: usize,
}

impl Lanes {
    /// Returns the records held.
    pub fn records(&self) -> usize {
        self.records
    }

    /// Returns the record bytes held.
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Appends `delivery` to its priority's lane.
    pub fn push(&mut self, delivery: Delivery) {
        let lane = delivery.priority as usize;
        self.records += 1;
        self.bytes += delivery.record.len();
        self.occupied |= 1 << lane;
        self.lanes[lane].push_back(delivery);
    }

    /// Removes one record from the lowest occupied lane whose priority passes `eligible`.
    pub fn evict(&mut self, eligible: impl Fn(Priority) -> bool, end: End) -> Option<Delivery> {
        let lane = (1..12).find(|&lane| {
            self.occupied & (1 << lane) != 0 && Priority::from_u8(lane as u8).is_ok_and(&eligible)
        })?;
        let queue = &mut self.lanes[lane];
        let evicted = match end {
            End::Oldest => queue.pop_front(),
            End::Newest => queue.pop_back(),
        }?;
        self.forget(lane, &evicted);
        Some(evicted)
    }

    /// Puts back a record taken by [`Lanes::evict`] from `end` of its lane, where it was.
    pub fn restore(&mut self, delivery: Delivery, end: End) {
        let lane = delivery.priority as usize;
        self.records += 1;
        self.bytes += delivery.record.len();
        self.occupied |= 1 << lane;
        match end {
            End::Oldest => self.lanes[lane].push_front(delivery),
            End::Newest => self.lanes[lane].push_back(delivery),
        }
    }

    /// Removes the record with the lowest sequence number across all lanes.
    pub fn pop_oldest(&mut self) -> Option<Delivery> {
        let lane = self.oldest_lane()?;
        let delivery = self.lanes[lane].pop_front()?;
        self.forget(lane, &delivery);
        Some(delivery)
    }

    /// Returns the lane whose first record has the lowest sequence number.
    fn oldest_lane(&self) -> Option<usize> {
        let mut best: Option<(usize, u64)> = None;
        let mut occupied = self.occupied;
        while occupied != 0 {
            let lane = occupied.trailing_zeros() as usize;
            occupied &= occupied - 1;
            if let Some(front) = self.lanes[lane].front() {
                if best.is_none_or(|(_, seq)| front.seq < seq) {
                    best = Some((lane, front.seq));
                }
            }
        }
        best.map(|(lane, _)| lane)
    }

    /// Returns the record [`Lanes::pop_oldest`] would return, left in place.
    pub fn oldest(&self) -> Option<&Delivery> {
        self.lanes[self.oldest_lane()?].front()
    }

    /// Returns the sequence number of the record [`Lanes::pop_oldest`] would return.
    pub fn oldest_seq(&self) -> Option<u64> {
        self.oldest().map(|d| d.seq)
    }

    /// Returns the receive time of the record [`Lanes::pop_oldest`] would return.
    pub fn oldest_received(&self) -> Option<i64> {
        self.oldest().map(|d| d.received)
    }

    /// Returns the size of the record [`Lanes::pop_oldest`] would return.
    pub fn oldest_len(&self) -> Option<usize> {
        self.oldest().map(|d| d.record.len())
    }

    fn forget(&mut self, lane: usize, delivery: &Delivery) {
        self.records -= 1;
        self.bytes -= delivery.record.len();
        if self.lanes[lane].is_empty() {
            self.occupied &= !(1 << lane);
        }
    }

    /// Empties every lane, returning what was held.
    pub fn clear(&mut self) -> Vec<Delivery> {
        let mut all = Vec::with_capacity(self.records);
        while let Some(delivery) = self.pop_oldest() {
            all.push(delivery);
        }
        all
    }
}
