//! What the router's tests share: a batch of encoded records, as a `PUBLISH` brings them,
//! and a subscription with a queue of its own.

use std::sync::Arc;

use herald_proto::{Filter, Frame, Kind, Record};
use herald_router::{GlobRules, Queue, QueueConfig, Router, Subscription};

/// Subscribes `subject` as subscription `id` of connection `connection`, narrowed to what
/// `visible` allows and in queue group `group` when given; returns its queue.
#[allow(dead_code)] // each test file uses what it needs
pub fn subscribe(
    router: &Router,
    (connection, id): (u64, u64),
    subject: &str,
    visible: Option<GlobRules>,
    group: Option<&str>,
) -> Arc<Queue> {
    let queue = Arc::new(Queue::new(QueueConfig::default(), Arc::default()));
    router.subscribe(Arc::new(Subscription {
        connection,
        id,
        filter: Filter::subject(subject).unwrap(),
        queue: Arc::clone(&queue),
        visible: visible.map(Arc::new),
        visible_info: None,
        route: false,
        group: group.map(Arc::from),
    }));
    queue
}

/// One log record per subject, decoded from a `PUBLISH` as the server would.
pub fn batch(subjects: &[&str]) -> Vec<herald_proto::frame::RawRecord> {
    let mut publish = Vec::new();
    let count = u32::try_from(subjects.len()).unwrap();
    herald_proto::frame::write_publish_header(&mut publish, 0, Default::default(), count);
    for subject in subjects {
        Record::new(Kind::Log, *subject).encode(&mut publish);
    }
    publish.insert(0, herald_proto::FrameType::Publish as u8);
    let Ok(Frame::Publish(batch)) = Frame::decode(publish.into()) else {
        panic!("a PUBLISH")
    };
    batch.records
}
