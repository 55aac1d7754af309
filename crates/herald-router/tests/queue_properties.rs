//! Properties of the subscriber queue under any mix of pushes and drains, with policies
//! drop-new and drop-old: it never holds more than its hard limit, and every record pushed is either drained or reported in a gap —
//! exactly once, with the right sequence range and priorities.

use std::sync::Arc;

use bytes::Bytes;
use herald_proto::priority::ALL_PRIORITIES;
use herald_proto::Policy;
use herald_router::{Delivery, Queue, QueueConfig};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Step {
    Push(Vec<(usize, usize)>),
    Drain(usize),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        proptest::collection::vec((0..ALL_PRIORITIES.len(), 1usize..200), 0..20)
            .prop_map(Step::Push),
        (1usize..2000).prop_map(Step::Drain),
    ]
}

proptest! {
    #[test]
    fn never_over_its_limits_and_gaps_account_for_every_drop(
        max_records in 1usize..30,
        max_bytes in 1usize..3000,
        policy in 0usize..2,
        steps in proptest::collection::vec(step(), 1..40),
    ) {
        let policy = [Policy::DropNew, Policy::DropOld][policy];
        let config = QueueConfig { max_records, max_bytes, hard_bytes: max_bytes * 2, policy, ..QueueConfig::default() };
        let queue = Queue::new(config, Arc::default());
        let mut next_seq = 1u64;
        let mut drained = Vec::new();
        let mut gapped = Vec::new();
        let mut dropped_by_priority = [0u64; 12];
        let mut gap_by_priority = [0u64; 12];
        let mut pushed = Vec::new();
        for step in steps {
            match step {
                Step::Push(records) => {
                    let mut batch: Vec<Delivery> = records.iter().map(|&(priority, len)| {
                        let delivery = Delivery {
                            seq: next_seq,
                            received: 0,
                            priority: ALL_PRIORITIES[priority],
                            record: Bytes::from(vec![0u8; len]),
                            subject: (0, 0),
                            producer: 0,
                            pseq: 0, groups: None,
                        };
                        next_seq += 1;
                        delivery
                    }).collect();
                    pushed.extend(batch.iter().map(|d| (d.seq, d.priority)));
                    let before = queue.dropped();
                    let pushed = queue.push_batch(&mut batch);
                    prop_assert_eq!(queue.dropped() - before, pushed.drops.total());
                    prop_assert!(pushed.blocked.is_empty());
                }
                Step::Drain(budget) => {
                    let mut out = Vec::new();
                    if let Some(gap) = queue.drain(&mut out, budget) {
                        prop_assert!(gap.count > 0);
                        prop_assert!(gap.first_seq <= gap.last_seq);
                        prop_assert_eq!(gap.by_priority.iter().sum::<u64>(), gap.count);
                        for (p, n) in gap.by_priority.iter().enumerate() {
                            gap_by_priority[p] += n;
                        }
                        gapped.push(gap);
                    }
                    let bytes: usize = out.iter().map(|d| d.record.len()).sum();
                    prop_assert!(out.len() <= 1 || bytes <= budget, "drain kept to its budget");
                    drained.extend(out.iter().map(|d| d.seq));
                }
            }
            // Only protected (EMERGENCY) records may go over the soft limits, never the hard one.
            prop_assert!(queue.depth_bytes() as usize <= max_bytes * 2);
        }
        let mut rest = Vec::new();
        if let Some(gap) = queue.drain(&mut rest, usize::MAX) {
            for (p, n) in gap.by_priority.iter().enumerate() {
                gap_by_priority[p] += n;
            }
            gapped.push(gap);
        }
        drained.extend(rest.iter().map(|d| d.seq));
        // Drained records come out in sequence order, each once.
        prop_assert!(drained.windows(2).all(|w| w[0] < w[1]));
        prop_assert_eq!(queue.depth(), 0);
        let lost: u64 = gapped.iter().map(|g| g.count).sum();
        prop_assert_eq!(drained.len() as u64 + lost, pushed.len() as u64);
        prop_assert_eq!(lost, queue.dropped());
        for (seq, priority) in &pushed {
            if !drained.contains(seq) {
                dropped_by_priority[*priority as usize] += 1;
                prop_assert!(gapped.iter().any(|g| g.first_seq <= *seq && *seq <= g.last_seq));
            }
        }
        prop_assert_eq!(dropped_by_priority, gap_by_priority);
    }
}
