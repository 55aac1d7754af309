//! The records Herald's archive will hold, and the byte key that fjall and redb sort by.

/// 2026-11-20T00:00:00Z in ns since the epoch: the ingest day. The next day is used for the
/// retention test, the day after for the read store.
pub const DAY0_NS: i64 = 20_777 * NS_PER_DAY;
pub const NS_PER_DAY: i64 = 86_400 * NS_PER_S;
pub const NS_PER_S: i64 = 1_000_000_000;

/// Length of the opaque record blob (an encoded record with a 60-byte value).
pub const BLOB_LEN: usize = 120;
/// Length of the value inside the blob.
pub const VALUE_LEN: usize = 60;

/// One record as the archive receives it.
pub struct Rec {
    pub name: usize,
    pub time: i64,
    pub seq: u64,
    pub blob: [u8; BLOB_LEN],
}

/// `SIG.0001.value` … for index 0 …
pub fn signal_names(count: usize) -> Vec<String> {
    (1..=count).map(|i| format!("SIG.{i:04}.value")).collect()
}

/// Partition (file, keyspace partition, table) name of the day that holds `time`.
pub fn day_of(time: i64) -> String {
    let days = time.div_euclid(NS_PER_DAY);
    format!("d{days}")
}

/// Byte key: name + 0x00 + big-endian (time ^ sign bit) + big-endian seq, so byte order is
/// (name, time, seq) order, negative times included.
pub fn encode_key(out: &mut Vec<u8>, name: &str, time: i64, seq: u64) {
    out.clear();
    out.extend_from_slice(name.as_bytes());
    out.push(0);
    out.extend_from_slice(&((time as u64) ^ (1 << 63)).to_be_bytes());
    out.extend_from_slice(&seq.to_be_bytes());
}

/// Time back from a byte key made by [`encode_key`] (used to check time order when reading).
pub fn key_time(key: &[u8]) -> i64 {
    let n = key.len();
    let t: [u8; 8] = key[n - 16..n - 8].try_into().expect("8 bytes");
    (u64::from_be_bytes(t) ^ (1 << 63)) as i64
}

/// Makes records: a small xorshift generator for the values, so every run writes the same
/// bytes and the values do not compress (the worst case for fjall's lz4 blocks).
pub struct Gen {
    state: u64,
    pub seq: u64,
}

impl Gen {
    pub fn new() -> Self {
        Gen {
            state: 0x9E37_79B9_7F4A_7C15,
            seq: 0,
        }
    }

    fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.state = x;
        x
    }

    /// A record shaped like a MessagePack record map: kind, subject, time, a 60-byte `bin`
    /// value and a fixed origin, padded to exactly 120 bytes.
    pub fn record(&mut self, name_index: usize, name: &str, time: i64) -> Rec {
        self.seq += 1;
        let mut value = [0u8; VALUE_LEN];
        for chunk in value.chunks_mut(8) {
            let r = self.next_u64().to_le_bytes();
            chunk.copy_from_slice(&r[..chunk.len()]);
        }
        let parts: [&[u8]; 9] = [
            &[0x85, 0x00, 0x01, 0x01], // map of 5, key 0 = kind 1, key 1 = subject
            &[0xa0 | name.len() as u8],
            name.as_bytes(),
            &[0x03, 0xd3], // key 3 = time, int64
            &time.to_be_bytes(),
            &[0x09, 0xc4, VALUE_LEN as u8], // key 9 = value, bin 8
            &value,
            &[0x05, 0xa0 | 20], // key 5 = origin, str of 20
            b"plant-07/ingest/4711",
        ];
        let mut blob = [0u8; BLOB_LEN]; // what the parts leave free stays zero
        let mut at = 0;
        for part in parts {
            blob[at..at + part.len()].copy_from_slice(part);
            at += part.len();
        }
        Rec {
            name: name_index,
            time,
            seq: self.seq,
            blob,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_keys_sort_as_name_time_seq() {
        let tuples = [
            ("SIG.0001.value", i64::MIN, 0u64),
            ("SIG.0001.value", -1, 5),
            ("SIG.0001.value", 0, 0),
            ("SIG.0001.value", 0, 1),
            ("SIG.0001.value", DAY0_NS, 0),
            ("SIG.0001.value", i64::MAX, u64::MAX),
            ("SIG.0001.valueX", i64::MIN, 0),
            ("SIG.0002.value", -5, 0),
        ];
        let keys: Vec<Vec<u8>> = tuples
            .iter()
            .map(|&(n, t, s)| {
                let mut k = Vec::new();
                encode_key(&mut k, n, t, s);
                assert_eq!(key_time(&k), t);
                k
            })
            .collect();
        assert!(keys.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn records_are_120_bytes_with_the_value_inside() {
        let mut g = Gen::new();
        let r = g.record(0, "SIG.0001.value", DAY0_NS);
        assert_eq!(r.blob.len(), BLOB_LEN);
        assert_eq!(r.seq, 1);
        assert_eq!(&r.blob[5..19], b"SIG.0001.value");
        assert_eq!(day_of(DAY0_NS), day_of(DAY0_NS + NS_PER_DAY - 1));
        assert_ne!(day_of(DAY0_NS), day_of(DAY0_NS + NS_PER_DAY));
    }
}
