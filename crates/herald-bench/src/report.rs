//! What a scenario reports, for people and for scripts.

/// A scenario's result.
#[derive(Debug, Clone)]
pub struct Report {
    /// Lines for people.
    pub lines: Vec<String>,
    /// The same for scripts.
    pub json: serde_json::Value,
}

/// Returns the values at `quantiles` (0..=1) of `values`, which it sorts; zeros if empty.
pub fn percentiles<const N: usize>(values: &mut [u64], quantiles: [f64; N]) -> [u64; N] {
    values.sort_unstable();
    quantiles.map(|q| {
        if values.is_empty() {
            return 0;
        }
        let index = ((values.len() - 1) as f64 * q).round() as usize;
        values[index.min(values.len() - 1)]
    })
}

pub use herald_memory::resident_kib;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_pick_by_rank() {
        let mut values: Vec<u64> = (1..=1000).rev().collect();
        assert_eq!(percentiles(&mut values, [0.5, 0.99, 1.0]), [501, 990, 1000]);
        assert_eq!(percentiles(&mut [], [0.5]), [0]);
    }

    #[test]
    fn reads_this_process_resident_memory() {
        assert!(resident_kib(std::process::id()).is_some_and(|kib| kib > 0));
    }
}
