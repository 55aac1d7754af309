//! `Signal`: a smooth, plausible time series — a slow sine, a mean-reverting drift and a
//! little noise — so the UI's charts look like real sensors rather than random numbers.

use super::rng::Rng;

/// How strongly the drift is pulled back toward zero at each sample (so it never wanders off).
const DRIFT_PULL: f64 = 0.02;

/// One simulated quantity.
#[derive(Debug, Clone)]
pub struct Signal {
    base: f64,
    amplitude: f64,
    period_s: f64,
    phase: f64,
    noise: f64,
    drift_step: f64,
    drift: f64,
}

impl Signal {
    /// Returns a signal around `base` swinging by `amplitude` over `period_s` seconds, with
    /// gaussian `noise`, a random phase, and a drift of about the noise's size.
    pub fn new(base: f64, amplitude: f64, period_s: f64, noise: f64, rng: &mut Rng) -> Signal {
        Signal {
            base,
            amplitude,
            period_s: period_s.max(1.0),
            phase: rng.range(0.0, std::f64::consts::TAU),
            noise,
            drift_step: noise,
            drift: 0.0,
        }
    }

    /// Returns the same signal with a drift whose steps are `step` (per sample).
    pub fn with_drift(mut self, step: f64) -> Signal {
        self.drift_step = step;
        self
    }

    /// Returns the value at `t` seconds since the start of the simulation.
    pub fn sample(&mut self, t: f64, rng: &mut Rng) -> f64 {
        // Ornstein–Uhlenbeck: a random walk pulled back toward zero.
        self.drift += -self.drift * DRIFT_PULL + self.drift_step * rng.normal();
        let swing = (std::f64::consts::TAU * t / self.period_s + self.phase).sin();
        self.base + self.amplitude * swing + self.drift + self.noise * rng.normal()
    }
}

/// Rounds to `digits` decimals, as an instrument would report (and as people read charts).
pub fn round_to(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// Rounds to `digits` significant digits (for values of any magnitude, such as pressures).
pub fn significant(value: f64, digits: i32) -> f64 {
    if value == 0.0 || !value.is_finite() {
        return value;
    }
    let magnitude = value.abs().log10().floor() as i32;
    round_to(value, digits - 1 - magnitude)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_stays_near_its_base_and_moves_smoothly() {
        let mut rng = Rng::new(3);
        let mut signal = Signal::new(4.0, 0.1, 600.0, 0.002, &mut rng);
        let mut previous = signal.sample(0.0, &mut rng);
        for step in 1..5_000 {
            let value = signal.sample(f64::from(step), &mut rng);
            assert!((value - 4.0).abs() < 0.3, "{value}");
            assert!((value - previous).abs() < 0.05, "jump {previous} → {value}");
            previous = value;
        }
    }

    #[test]
    fn rounding_keeps_the_given_decimals() {
        assert_eq!(round_to(1.23456, 2), 1.23);
        assert_eq!(round_to(-0.005, 1), -0.0);
        assert_eq!(significant(4.019899771942098, 4), 4.02);
        assert_eq!(significant(1.23456e-6, 3), 1.23e-6);
    }
}
