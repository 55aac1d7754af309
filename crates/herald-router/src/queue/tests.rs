//! Policies, priority-aware shedding, protected records, latest-only and blocking.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use herald_proto::{Policy, Priority};

use super::*;

fn delivery(seq: u64, priority: Priority) -> Delivery {
    delivery_on(seq, priority, "s")
}

fn delivery_on(seq: u64, priority: Priority, subject: &str) -> Delivery {
    // The "record" is just the subject followed by padding up to 10 bytes.
    let mut record = subject.as_bytes().to_vec();
    record.resize(record.len().max(10), b'.');
    Delivery {
        seq,
        received: 0,
        priority,
        record: Bytes::from(record),
        subject: (0, subject.len() as u32),
        producer: 0,
        pseq: 0,
        groups: None,
    }
}

fn queue(max_records: usize, policy: Policy) -> Queue {
    let config = QueueConfig {
        max_records,
        policy,
        ..QueueConfig::default()
    };
    Queue::new(config, Arc::default())
}

fn push(queue: &Queue, deliveries: &[(u64, Priority)]) -> Pushed {
    let mut batch: Vec<Delivery> = deliveries
        .iter()
        .map(|&(seq, p)| delivery(seq, p))
        .collect();
    queue.push_batch(&mut batch)
}

fn drain_all(queue: &Queue) -> (Vec<u64>, Option<Gap>) {
    let mut out = Vec::new();
    let gap = queue.drain(&mut out, usize::MAX);
    (out.iter().map(|d| d.seq).collect(), gap)
}

use Priority::{Debug, Emergency, Error, Info, Warning};

#[test]
fn drop_new_refuses_the_newcomer_and_reports_the_gap() {
    let queue = queue(2, Policy::DropNew);
    let pushed = push(&queue, &[(1, Info), (2, Info), (3, Info), (4, Info)]);
    assert_eq!(pushed.drops.get(DropReason::QueueFull), 2);
    // Counted by priority while the gap is pending, and after it was taken.
    assert_eq!(queue.lost_by_priority()[Info as usize], 2);
    let (seqs, gap) = drain_all(&queue);
    assert_eq!(queue.lost_by_priority()[Info as usize], 2);
    assert_eq!(queue.lost_by_priority().iter().sum::<u64>(), 2);
    assert_eq!(seqs, [1, 2]);
    let gap = gap.unwrap();
    assert_eq!((gap.count, gap.first_seq, gap.last_seq), (2, 3, 4));
    assert_eq!(gap.by_priority[Info as usize], 2);
    assert_eq!(
        (queue.depth(), queue.delivered(), queue.dropped()),
        (0, 2, 2)
    );
    assert!(
        queue.drain(&mut Vec::new(), usize::MAX).is_none(),
        "a gap is reported once"
    );
}

#[test]
fn lower_priorities_are_shed_first() {
    let queue = queue(3, Policy::DropNew);
    push(&queue, &[(1, Debug), (2, Info), (3, Debug)]);
    // A WARNING evicts the newest DEBUG; an INFO then evicts the other DEBUG; a DEBUG is refused.
    push(&queue, &[(4, Warning), (5, Info), (6, Debug)]);
    let (seqs, gap) = drain_all(&queue);
    assert_eq!(seqs, [2, 4, 5], "kept in sequence order across priorities");
    let gap = gap.unwrap();
    assert_eq!((gap.count, gap.first_seq, gap.last_seq), (3, 1, 6));
    assert_eq!(gap.by_priority[Debug as usize], 3);
}

#[test]
fn drop_old_evicts_the_oldest_of_the_lowest_priority() {
    let queue = queue(3, Policy::DropOld);
    push(&queue, &[(1, Info), (2, Error), (3, Info)]);
    push(&queue, &[(4, Info)]);
    push(&queue, &[(5, Debug)]);
    let (seqs, gap) = drain_all(&queue);
    assert_eq!(
        seqs,
        [2, 3, 4],
        "INFO 1 made room for INFO 4; DEBUG 5 found nothing lower"
    );
    assert_eq!(gap.unwrap().count, 2);
}

#[test]
fn protected_records_are_kept_over_the_soft_limit_until_the_hard_limit() {
    let config = QueueConfig {
        max_records: 2,
        hard_bytes: 40,
        ..QueueConfig::default()
    };
    let queue = Queue::new(config, Arc::default());
    push(&queue, &[(1, Info), (2, Info)]);
    let pushed = push(&queue, &[(3, Emergency), (4, Emergency)]);
    assert_eq!(
        pushed.drops.total(),
        0,
        "protected and within the hard limit: nothing lost"
    );
    // 40 bytes hold four 10-byte records; the fifth sheds an INFO, the seventh has nothing left.
    let pushed = push(&queue, &[(5, Emergency), (6, Emergency), (7, Emergency)]);
    assert_eq!(pushed.drops.get(DropReason::QueueFull), 2);
    assert_eq!(pushed.drops.get(DropReason::HardLimit), 1);
    let (seqs, gap) = drain_all(&queue);
    assert_eq!(seqs, [3, 4, 5, 6]);
    let gap = gap.unwrap();
    assert_eq!(gap.by_priority[Info as usize], 2);
    assert_eq!(gap.by_priority[Emergency as usize], 1);
}

#[test]
fn the_protected_priority_is_configurable() {
    let config = QueueConfig {
        max_records: 1,
        protected: Error,
        ..QueueConfig::default()
    };
    let queue = Queue::new(config, Arc::default());
    let pushed = push(&queue, &[(1, Info), (2, Error), (3, Warning)]);
    // ERROR is protected and goes over the limit. Shedding the INFO would not make room for
    // the WARNING (the ERROR counts too), so nothing is shed and only the WARNING is lost.
    assert_eq!(pushed.drops.total(), 1);
    assert_eq!(drain_all(&queue).0, [1, 2]);
}

#[test]
fn disconnect_flags_the_queue_once() {
    let queue = queue(1, Policy::Disconnect);
    let pushed = push(&queue, &[(1, Info), (2, Info)]);
    assert_eq!(pushed.drops.get(DropReason::SlowConsumer), 1);
    assert!(queue.take_disconnect());
    assert!(!queue.take_disconnect());
    assert_eq!(queue.discard(DropReason::SlowConsumer), 1);
    assert_eq!(queue.drops().get(DropReason::SlowConsumer), 2);
    assert_eq!(queue.depth(), 0);
}

#[test]
fn block_hands_back_what_does_not_fit() {
    let queue = queue(1, Policy::Block);
    let pushed = push(&queue, &[(1, Info), (2, Info)]);
    assert_eq!(pushed.drops.total(), 0);
    assert_eq!(
        pushed.blocked.iter().map(|d| d.seq).collect::<Vec<_>>(),
        [2]
    );
}

#[tokio::test]
async fn push_blocking_waits_for_room_then_gives_up_after_the_timeout() {
    let config = QueueConfig {
        max_records: 1,
        policy: Policy::Block,
        block_timeout: Duration::from_millis(200),
        ..QueueConfig::default()
    };
    let queue = Arc::new(Queue::new(config, Arc::default()));
    let blocked = push(&queue, &[(1, Info), (2, Info)]).blocked;
    let drainer = {
        let queue = Arc::clone(&queue);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            drain_all(&queue).0
        })
    };
    let drops = queue
        .push_blocking(blocked, tokio::time::Instant::now())
        .await;
    assert_eq!(drops.total(), 0, "room came within the timeout");
    assert_eq!(drainer.await.unwrap(), [1]);

    let started = tokio::time::Instant::now();
    let blocked = push(&queue, &[(3, Info)]).blocked;
    let drops = queue
        .push_blocking(blocked, tokio::time::Instant::now())
        .await;
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(drops.get(DropReason::BlockTimeout), 1);
    assert_eq!(queue.drops().get(DropReason::BlockTimeout), 1);
    assert_eq!(queue.drops().get(DropReason::QueueFull), 0);
    let (seqs, gap) = drain_all(&queue);
    assert_eq!(seqs, [2]);
    assert_eq!(gap.unwrap().first_seq, 3);
}

#[tokio::test]
async fn a_block_subscriber_that_timed_out_costs_no_second_wait_until_it_drains() {
    let config = QueueConfig {
        max_records: 1,
        policy: Policy::Block,
        block_timeout: Duration::from_millis(100),
        ..QueueConfig::default()
    };
    let queue = Queue::new(config, Arc::default());
    let blocked = push(&queue, &[(1, Info), (2, Info)]).blocked;
    queue
        .push_blocking(blocked, tokio::time::Instant::now())
        .await;
    assert!(queue.is_stalled(), "the first wait timed out");
    // The next batches drop at once: nothing comes back to wait for.
    for seq in 3..10 {
        let pushed = push(&queue, &[(seq, Info)]);
        assert!(pushed.blocked.is_empty());
        assert_eq!(pushed.drops.get(DropReason::QueueFull), 1);
    }
    let (seqs, gap) = drain_all(&queue);
    assert_eq!(seqs, [1]);
    assert_eq!(gap.unwrap().count, 8, "2 timed out, 3..=9 dropped");
    assert!(!queue.is_stalled(), "drained: the episode is over");
    push(&queue, &[(10, Info)]);
    assert_eq!(push(&queue, &[(11, Info)]).blocked.len(), 1, "blocks again");
}

#[test]
fn latest_only_keeps_the_newest_per_subject_and_paces_each_subject() {
    let config = QueueConfig {
        latest_interval: Some(Duration::from_millis(50)),
        ..QueueConfig::default()
    };
    let queue = Queue::new(config, Arc::default());
    let mut batch = vec![
        delivery_on(1, Info, "a"),
        delivery_on(2, Info, "b"),
        delivery_on(3, Info, "a"),
    ];
    let pushed = queue.push_batch(&mut batch);
    assert_eq!(pushed.drops.get(DropReason::Superseded), 1);
    assert_eq!(
        drain_all(&queue).0,
        [2, 3],
        "newest of each subject, in sequence order"
    );
    queue.push_batch(&mut vec![delivery_on(4, Info, "a")]);
    assert_eq!(
        drain_all(&queue).0,
        Vec::<u64>::new(),
        "subject a was just sent"
    );
    let ready = queue.next_ready().expect("a waits");
    assert!(ready > std::time::Instant::now());
    std::thread::sleep(ready - std::time::Instant::now());
    assert_eq!(drain_all(&queue).0, [4]);
    assert_eq!(queue.dropped(), 0, "superseded records are not losses");
}

#[test]
fn past_the_server_budget_the_largest_queue_sheds_its_oldest() {
    let budget = Arc::new(QueueBudget::new(1_000));
    let config = QueueConfig::default();
    let stuck = Queue::with_budget(config, Arc::default(), Arc::clone(&budget));
    let reader = Queue::with_budget(config, Arc::default(), Arc::clone(&budget));
    let big = |seq| Delivery {
        record: Bytes::from(vec![0u8; 100]),
        ..delivery(seq, Info)
    };
    for seq in 1..=15 {
        stuck.push_batch(&mut vec![big(seq)]);
    }
    assert_eq!(
        stuck.depth_bytes(),
        1_000,
        "it sheds its oldest to stay within"
    );
    assert_eq!(stuck.drops().get(DropReason::ServerBudget), 5);
    // The reader's records go in; the largest queue (the stuck one) pays for them.
    reader.push_batch(&mut vec![big(16), big(17)]);
    assert_eq!(reader.depth_bytes(), 200);
    assert_eq!(stuck.depth_bytes(), 800);
    assert_eq!(budget.used(), 1_000);
    let (seqs, gap) = drain_all(&stuck);
    assert_eq!(seqs, (8..=15).collect::<Vec<_>>(), "the newest are kept");
    assert_eq!(gap.unwrap().count, 7);
    assert_eq!(budget.used(), 200);
    drop(reader);
    assert_eq!(budget.used(), 0, "a dropped queue gives its bytes back");
}
