//! The subject filter of a block: a Bloom filter over the distinct subjects of its entries,
//! so that a read of one name's samples skips the blocks that cannot hold it without
//! reading them. About ten bits per distinct subject and four probes: one block in ~50
//! that does not hold a name is read in vain.
//!
//! The hash is FNV-1a (64 bits) with a final mix; it is part of the file format and must
//! never change.

/// Bits per distinct subject (before rounding up to a power of two).
const BITS_PER_SUBJECT: usize = 10;
/// Probes per subject.
const PROBES: u32 = 4;
/// The smallest filter, in bits.
const MIN_BITS: usize = 64;

/// Returns the filter's hash of `subject`.
pub fn subject_hash(subject: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for byte in subject {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    // SplitMix64's finaliser: the two halves become independent enough to probe with.
    hash ^= hash >> 30;
    hash = hash.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    hash ^= hash >> 27;
    hash = hash.wrapping_mul(0x94d0_49bb_1331_11eb);
    hash ^ (hash >> 31)
}

/// The bit positions `hash` sets in a filter of `bits` bits (a power of two).
fn probes(hash: u64, bits: usize) -> impl Iterator<Item = usize> {
    let (first, step) = (hash as u32, ((hash >> 32) as u32) | 1);
    let mask = bits - 1;
    (0..PROBES).map(move |i| first.wrapping_add(i.wrapping_mul(step)) as usize & mask)
}

/// Returns the filter's bytes for the subjects hashed in `hashes` (distinct).
pub fn build(hashes: &[u64]) -> Vec<u8> {
    let bits = (hashes.len() * BITS_PER_SUBJECT)
        .max(MIN_BITS)
        .next_power_of_two();
    let mut filter = vec![0u8; bits / 8];
    for &hash in hashes {
        for bit in probes(hash, bits) {
            filter[bit / 8] |= 1 << (bit % 8);
        }
    }
    filter
}

/// Returns false only if no subject of the block hashes to `hash`. An empty filter (a block
/// made without one) may hold anything.
pub fn may_contain(filter: &[u8], hash: u64) -> bool {
    let bits = filter.len() * 8;
    if bits == 0 || !bits.is_power_of_two() {
        return true;
    }
    probes(hash, bits).all(|bit| filter[bit / 8] & (1 << (bit % 8)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_subject_put_in_is_found_and_few_others_are() {
        let names: Vec<String> = (0..220)
            .map(|n| format!("ANTENNA.DV{n:03}.Mount"))
            .collect();
        let hashes: Vec<u64> = names.iter().map(|n| subject_hash(n.as_bytes())).collect();
        let filter = build(&hashes);
        assert!(filter.len() <= 512, "{} bytes", filter.len());
        assert!(hashes.iter().all(|h| may_contain(&filter, *h)));
        let strangers = (0..10_000)
            .filter(|n| may_contain(&filter, subject_hash(format!("OTHER.{n}").as_bytes())))
            .count();
        assert!(strangers < 300, "{strangers} of 10000 false positives");
        assert!(may_contain(&[], 42));
    }

    #[test]
    fn the_hash_is_the_one_on_disk() {
        // Changing the hash would make every filter written before it lie. The value is
        // FNV-1a then SplitMix64's finaliser, worked out independently (in Python).
        assert_eq!(subject_hash(b"a.b"), 0x9a7f_24d2_4ce8_3a4e);
    }
}
