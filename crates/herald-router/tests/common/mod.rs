//! What the router's tests share: a batch of encoded records, as a `PUBLISH` brings them.

use herald_proto::{Frame, Kind, Record};

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
