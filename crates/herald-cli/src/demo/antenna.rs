//! `Antenna`: one dish of the simulated array — where its mount points, whether it tracks,
//! and the state of its receiver.

use super::rng::Rng;

/// How fast a source moves across the sky, degrees of azimuth per second (sidereal-ish).
const SKY_AZ_DEG_PER_S: f64 = 0.004;
/// Slew speed of the mount in azimuth, degrees per second.
const SLEW_AZ_DEG_PER_S: f64 = 3.0;
/// Slew speed of the mount in elevation, degrees per second.
const SLEW_EL_DEG_PER_S: f64 = 1.5;
/// Pointing error below which the mount counts as tracking, degrees.
const TRACKING_TOLERANCE_DEG: f64 = 0.02;

/// The local oscillator frequency of each receiver band, GHz (index = band - 1).
pub const BAND_LO_GHZ: [f64; 10] = [
    35.0, 67.0, 92.0, 137.0, 183.0, 233.0, 321.0, 405.0, 661.0, 869.0,
];

/// The state of one antenna.
#[derive(Debug, Clone)]
pub struct Antenna {
    /// `DV01` … `DV12`.
    pub name: String,
    /// Azimuth, degrees.
    pub az: f64,
    /// Elevation, degrees.
    pub el: f64,
    target_az: f64,
    target_el: f64,
    el_rate: f64,
    /// Whether the mount is on source.
    pub tracking: bool,
    /// Receiver band in use (1..=10).
    pub band: u32,
    /// Whether the receiver's local oscillator is locked.
    pub locked: bool,
}

impl Antenna {
    /// Returns antenna `index` (0-based → `DV01`), stowed-ish at a random position.
    pub fn new(index: usize, rng: &mut Rng) -> Antenna {
        let az = rng.range(0.0, 360.0);
        let el = rng.range(30.0, 60.0);
        Antenna {
            name: format!("DV{:02}", index + 1),
            az,
            el,
            target_az: az,
            target_el: el,
            el_rate: 0.002,
            tracking: true,
            band: 3,
            locked: true,
        }
    }

    /// Returns `ANTENNA.<name>.<part>`.
    pub fn subject(&self, part: &str) -> String {
        format!("ANTENNA.{}.{part}", self.name)
    }

    /// Returns the host name of its antenna bus master computer.
    pub fn host(&self) -> String {
        format!("{}-abm", self.name.to_lowercase())
    }

    /// Starts a slew toward a new source at (`az`, `el`).
    pub fn point_at(&mut self, az: f64, el: f64) {
        self.target_az = az.rem_euclid(360.0);
        self.target_el = el.clamp(15.0, 88.0);
        self.el_rate = if self.target_el > 60.0 { -0.002 } else { 0.002 };
    }

    /// Advances `dt` seconds: the source moves across the sky, the mount follows it.
    pub fn step(&mut self, dt: f64) {
        self.target_az = (self.target_az + SKY_AZ_DEG_PER_S * dt).rem_euclid(360.0);
        self.target_el = (self.target_el + self.el_rate * dt).clamp(15.0, 88.0);
        let az_error = shortest_turn(self.az, self.target_az);
        let el_error = self.target_el - self.el;
        self.az = (self.az + approach(az_error, SLEW_AZ_DEG_PER_S * dt)).rem_euclid(360.0);
        self.el += approach(el_error, SLEW_EL_DEG_PER_S * dt);
        self.tracking = shortest_turn(self.az, self.target_az).abs() < TRACKING_TOLERANCE_DEG
            && (self.target_el - self.el).abs() < TRACKING_TOLERANCE_DEG;
    }

    /// Returns the local oscillator frequency of the band in use, GHz.
    pub fn lo_ghz(&self) -> f64 {
        BAND_LO_GHZ[(self.band.clamp(1, 10) - 1) as usize]
    }
}

/// Returns the move that closes `error` by at most `max_step`.
fn approach(error: f64, max_step: f64) -> f64 {
    error.signum() * error.abs().min(max_step)
}

/// Returns the signed angle in (-180, 180] that turns `from` into `to`, degrees.
fn shortest_turn(from: f64, to: f64) -> f64 {
    let turn = (to - from).rem_euclid(360.0);
    if turn > 180.0 {
        turn - 360.0
    } else {
        turn
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mount_slews_to_a_new_source_then_tracks_it() {
        let mut antenna = Antenna::new(0, &mut Rng::new(1));
        antenna.point_at(antenna.az + 30.0, 45.0);
        antenna.step(0.1);
        assert!(!antenna.tracking);
        for _ in 0..400 {
            antenna.step(0.1);
        }
        assert!(antenna.tracking, "{antenna:?}");
        assert_eq!(antenna.subject("Mount"), "ANTENNA.DV01.Mount");
    }

    #[test]
    fn turns_go_the_short_way_round() {
        assert_eq!(shortest_turn(350.0, 10.0), 20.0);
        assert_eq!(shortest_turn(10.0, 350.0), -20.0);
    }
}
