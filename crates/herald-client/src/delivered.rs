//! A delivered record: the server's stamps plus the record's bytes, decoded on first use.
//!
//! The connection's reader only checks each record (without allocating); the full decode
//! happens in the subscriber's task when it asks for the record, so the reader keeps up
//! with the socket and the decode work runs where the record is used.

use std::sync::OnceLock;

use bytes::Bytes;
use herald_proto::msgpack::Reader;
use herald_proto::{Kind, Priority, Record, RecordMeta};

/// A record delivered to a subscription.
#[derive(Debug, Clone)]
pub struct Delivered {
    /// The subscription it matched.
    pub subscription: u64,
    /// The server's sequence number.
    pub seq: u64,
    /// The server's receive time, ns since the epoch.
    pub received: i64,
    bytes: Bytes,
    meta: RecordMeta,
    // Boxed: a decoded record is large, and most deliveries pass through queues undecoded.
    record: OnceLock<Box<Record>>,
}

impl Delivered {
    /// Wraps a record that arrived in a `DELIVER` frame, already checked by the frame's
    /// decoder: no second pass over its bytes.
    pub fn from_entry(entry: herald_proto::frame::DeliverEntry) -> Self {
        Delivered {
            subscription: entry.subscription,
            seq: entry.seq,
            received: entry.received,
            bytes: entry.record.bytes,
            meta: entry.record.meta,
            record: OnceLock::new(),
        }
    }

    /// Wraps a record's bytes, checking them.
    ///
    /// # Errors
    /// The decode error if the bytes are not a valid record.
    pub fn new(
        subscription: u64,
        seq: u64,
        received: i64,
        bytes: Bytes,
    ) -> Result<Self, herald_proto::DecodeError> {
        let meta = RecordMeta::scan(&mut Reader::new(&bytes), 0)?;
        Ok(Delivered {
            subscription,
            seq,
            received,
            bytes,
            meta,
            record: OnceLock::new(),
        })
    }

    /// Returns the record, decoding it the first time.
    ///
    /// # Panics
    /// Never for bytes accepted by [`Delivered::new`]: `RecordMeta::scan` and
    /// `Record::decode` accept exactly the same records.
    pub fn record(&self) -> &Record {
        self.record
            .get_or_init(|| Box::new(decode_checked(&self.bytes)))
    }

    /// Returns the record, decoding it unless that was done already.
    pub fn into_record(self) -> Record {
        let Delivered { record, bytes, .. } = self;
        record
            .into_inner()
            .map_or_else(|| decode_checked(&bytes), |record| *record)
    }

    /// Returns the subject without decoding the record.
    pub fn subject(&self) -> &str {
        let (start, end) = self.meta.subject;
        std::str::from_utf8(&self.bytes[start as usize..end as usize]).unwrap_or_default()
    }

    /// Returns the priority without decoding the record.
    pub fn priority(&self) -> Priority {
        self.meta.priority
    }

    /// Returns the kind without decoding the record.
    pub fn kind(&self) -> Kind {
        self.meta.kind
    }

    /// Returns the producer's timestamp without decoding the record.
    pub fn time(&self) -> i64 {
        self.meta.time
    }

    /// Returns the record's encoded bytes, exactly as the producer sent them.
    pub fn bytes(&self) -> &Bytes {
        &self.bytes
    }
}

/// Decodes bytes that `RecordMeta::scan` accepted.
fn decode_checked(bytes: &[u8]) -> Record {
    Record::from_bytes(bytes).expect("record was checked when it arrived")
}

impl PartialEq for Delivered {
    fn eq(&self, other: &Self) -> bool {
        (self.subscription, self.seq, self.received, &self.bytes)
            == (other.subscription, other.seq, other.received, &other.bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_routing_fields_without_decoding_and_decodes_on_demand() {
        let record = Record {
            priority: Priority::Error,
            text: "t".into(),
            ..Record::new(Kind::Log, "a.b")
        };
        let delivered = Delivered::new(1, 2, 3, record.to_bytes().into()).unwrap();
        assert_eq!(
            (delivered.subject(), delivered.priority(), delivered.kind()),
            ("a.b", Priority::Error, Kind::Log)
        );
        assert_eq!(delivered.record(), &record);
        assert_eq!(delivered.into_record(), record);
        assert!(Delivered::new(1, 2, 3, Bytes::from_static(&[0x80])).is_err());
    }
}
