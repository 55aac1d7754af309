//! For tests that mutate inputs at random: a xorshift64 generator from a fixed seed, so that
//! every run makes the same mutations.

/// Returns a generator of the xorshift64 sequence from `seed` (not 0).
pub(crate) fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
