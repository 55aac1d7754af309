//! `Rng`: a tiny seeded xorshift generator, so a demo run can be repeated with `--demo-seed`.

/// xorshift64* (Vigna 2016): fast, 64 bits of state, good enough for simulated noise.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// Returns a generator for `seed` (any value, zero included).
    pub fn new(seed: u64) -> Rng {
        // One splitmix64 step spreads small seeds over the state and never yields zero
        // for the xorshift (which would stay zero forever).
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        Rng { state: z.max(1) }
    }

    /// Returns a new generator seeded from this one (for a part of the simulation).
    pub fn fork(&mut self) -> Rng {
        Rng::new(self.next_u64())
    }

    /// Returns the next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Returns a float uniform in `[0, 1)`.
    pub fn unit(&mut self) -> f64 {
        // The top 53 bits make every representable step equally likely.
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Returns a float uniform in `[low, high)`.
    pub fn range(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.unit()
    }

    /// Returns an index uniform in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        (self.unit() * n as f64) as usize % n.max(1)
    }

    /// Returns one of `items` (not empty).
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }

    /// Returns a standard normal sample (Box–Muller).
    pub fn normal(&mut self) -> f64 {
        let u = 1.0 - self.unit(); // (0, 1]: the logarithm stays finite
        let v = self.unit();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Returns a Poisson sample of mean `mean` (how many events fall in one tick).
    pub fn poisson(&mut self, mean: f64) -> u32 {
        if mean > 30.0 {
            // Large means (storms): the normal approximation is close and O(1).
            return (mean + mean.sqrt() * self.normal()).round().max(0.0) as u32;
        }
        let limit = (-mean).exp();
        let mut product = self.unit();
        let mut count = 0;
        while product > limit {
            product *= self.unit();
            count += 1;
        }
        count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_sequence() {
        let (mut a, mut b) = (Rng::new(7), Rng::new(7));
        let first: Vec<u64> = (0..5).map(|_| a.next_u64()).collect();
        assert_eq!(first, (0..5).map(|_| b.next_u64()).collect::<Vec<_>>());
        assert_ne!(first[0], Rng::new(8).next_u64());
        assert_ne!(Rng::new(0).next_u64(), 0);
    }

    #[test]
    fn samples_stay_in_range_with_plausible_means() {
        let mut rng = Rng::new(1);
        let n = 20_000;
        let mut unit_sum = 0.0;
        let mut poisson_sum = 0u64;
        for _ in 0..n {
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
            assert!(rng.below(12) < 12);
            unit_sum += u;
            poisson_sum += u64::from(rng.poisson(3.0));
        }
        assert!((unit_sum / n as f64 - 0.5).abs() < 0.02);
        assert!((poisson_sum as f64 / n as f64 - 3.0).abs() < 0.1);
        let big: u32 = (0..100).map(|_| rng.poisson(150.0)).sum();
        assert!((big as f64 / 100.0 - 150.0).abs() < 10.0);
    }
}
