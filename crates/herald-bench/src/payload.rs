//! The opaque payload the peers carry: `size` bytes whose first 8 are the send time in ns
//! since the epoch, big-endian, then filler. Herald carries the send time in its record
//! header instead.

use bytes::{BufMut, BytesMut};

/// Bytes the send time takes; a payload is never shorter.
pub const STAMP_LEN: usize = 8;

/// Writes a payload of `size` bytes (at least [`STAMP_LEN`]) stamped with `sent_ns` into
/// `payload`, replacing what it held.
pub fn encode(payload: &mut BytesMut, sent_ns: i64, size: usize) {
    payload.clear();
    payload.put_i64(sent_ns);
    payload.resize(size.max(STAMP_LEN), b'x');
}

/// Returns the send time a payload carries, or `None` if it is shorter than [`STAMP_LEN`].
pub fn decode(payload: &[u8]) -> Option<i64> {
    let stamp = payload.get(..STAMP_LEN)?;
    Some(i64::from_be_bytes(stamp.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_payload_carries_its_send_time_and_has_the_asked_size() {
        let mut payload = BytesMut::new();
        encode(&mut payload, 1_763_712_000_123_456_789, 128);
        assert_eq!(payload.len(), 128);
        assert_eq!(decode(&payload), Some(1_763_712_000_123_456_789));
        encode(&mut payload, -1, 3);
        assert_eq!(payload.len(), STAMP_LEN);
        assert_eq!(decode(&payload), Some(-1));
        assert_eq!(decode(b"short"), None);
    }
}
