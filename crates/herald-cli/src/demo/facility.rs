//! `Facility`: the simulated radio telescope — twelve antennas, a correlator, the control
//! system, weather stations and the archive — and the shared state the log traffic, the
//! storms, run control and the information objects read and change.

use super::antenna::Antenna;
use super::rng::Rng;
use super::signal::Signal;

/// Number of antennas, `DV01` … `DV12`.
pub const ANTENNAS: usize = 12;

/// The subsystems besides the antennas, each with a `<NAME>.Health` object.
pub const SUBSYSTEMS: [&str; 4] = ["CORRELATOR", "CONTROL", "WEATHER", "ARCHIVE"];

/// Counts and state behind one `SubsystemHealth` object.
#[derive(Debug, Clone, Default)]
pub struct Health {
    /// ERROR or worse logged so far.
    pub errors: u32,
    /// WARNINGs logged so far.
    pub warnings: u32,
    /// Until when (simulation seconds) the subsystem is `DEGRADED`.
    pub degraded_until: f64,
}

/// The observing run that run control drives.
#[derive(Debug, Clone)]
pub struct Run {
    /// Run number.
    pub number: u32,
    /// Scan number within the run.
    pub scan: u32,
    /// `IDLE`, `CONFIGURED` or `OBSERVING`.
    pub state: &'static str,
    /// Source being observed.
    pub source: &'static str,
}

/// The site's weather as the stations see it (each adds its own small offsets).
#[derive(Debug, Clone)]
pub struct Weather {
    /// Air temperature, °C.
    pub temperature_c: f64,
    /// Relative humidity, %.
    pub humidity: f64,
    /// Wind speed, m/s.
    pub wind_speed_ms: f64,
    /// Wind direction, degrees from north.
    pub wind_dir_deg: f64,
    temperature: Signal,
    humidity_signal: Signal,
    wind: Signal,
    direction: Signal,
}

impl Weather {
    fn new(rng: &mut Rng) -> Weather {
        Weather {
            temperature_c: 0.0,
            humidity: 0.0,
            wind_speed_ms: 0.0,
            wind_dir_deg: 0.0,
            temperature: Signal::new(-2.0, 3.0, 1800.0, 0.03, rng).with_drift(0.02),
            humidity_signal: Signal::new(18.0, 6.0, 2400.0, 0.1, rng).with_drift(0.1),
            wind: Signal::new(6.0, 3.0, 300.0, 0.4, rng).with_drift(0.15),
            direction: Signal::new(240.0, 25.0, 900.0, 2.0, rng).with_drift(1.0),
        }
    }

    fn step(&mut self, t: f64, rng: &mut Rng) {
        self.temperature_c = self.temperature.sample(t, rng);
        self.humidity = self.humidity_signal.sample(t, rng).clamp(2.0, 100.0);
        self.wind_speed_ms = self.wind.sample(t, rng).max(0.0);
        self.wind_dir_deg = self.direction.sample(t, rng).rem_euclid(360.0);
    }
}

/// Everything the simulation shares.
#[derive(Debug)]
pub struct Facility {
    /// Seconds since the simulation started.
    pub t: f64,
    /// The antennas.
    pub antennas: Vec<Antenna>,
    /// Health per antenna (`0..ANTENNAS`), then per entry of [`SUBSYSTEMS`].
    pub health: Vec<Health>,
    /// The site's weather.
    pub weather: Weather,
    /// The observing run.
    pub run: Run,
}

impl Facility {
    /// Returns the facility at the start of the simulation.
    pub fn new(rng: &mut Rng) -> Facility {
        Facility {
            t: 0.0,
            antennas: (0..ANTENNAS).map(|i| Antenna::new(i, rng)).collect(),
            health: vec![Health::default(); ANTENNAS + SUBSYSTEMS.len()],
            weather: Weather::new(rng),
            run: Run {
                number: 1000 + rng.below(9000) as u32,
                scan: 0,
                state: "IDLE",
                source: "J1924-2914",
            },
        }
    }

    /// Advances the facility by `dt` seconds.
    pub fn step(&mut self, dt: f64, rng: &mut Rng) {
        self.t += dt;
        self.weather.step(self.t, rng);
        for antenna in &mut self.antennas {
            antenna.step(dt);
        }
    }

    /// Returns the index into [`Facility::health`] of subsystem `name` (one of [`SUBSYSTEMS`]).
    ///
    /// # Panics
    /// If `name` is not one of [`SUBSYSTEMS`] (a bug in the simulation).
    pub fn subsystem(name: &str) -> usize {
        let position = SUBSYSTEMS.iter().position(|s| *s == name);
        ANTENNAS + position.expect("a known subsystem")
    }

    /// Returns `OPERATIONAL` or `DEGRADED` for health entry `index`.
    pub fn state(&self, index: usize) -> &'static str {
        if self.health[index].degraded_until > self.t {
            "DEGRADED"
        } else {
            "OPERATIONAL"
        }
    }

    /// Returns how many antennas are on source.
    pub fn tracking(&self) -> usize {
        self.antennas.iter().filter(|a| a.tracking).count()
    }
}
