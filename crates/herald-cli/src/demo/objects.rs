//! `Objects`: the few hundred information objects of the facility and how their values
//! move — mounts at 5 Hz, receivers and weather at 2 Hz, everything else at 1 Hz — read
//! from the facility's state or from a [`Signal`] of their own.

use herald_proto::value::Field;

use super::facility::{Facility, ANTENNAS, SUBSYSTEMS};
use super::rng::Rng;
use super::signal::{round_to, Signal};
use super::{flag, float, int, text};

/// Simulation ticks per second (the driver's tick is 100 ms).
pub const TICKS_PER_S: u64 = 10;

/// The sensors of each antenna: name, base value, swing, noise, unit, upper limit.
const ANTENNA_SENSORS: [(&str, f64, f64, f64, &str, f64); 10] = [
    ("CabinTemp", 18.0, 0.8, 0.02, "C", 25.0),
    ("ElectronicsTemp", 24.0, 1.0, 0.03, "C", 35.0),
    ("MotorTempAz", 35.0, 3.0, 0.05, "C", 60.0),
    ("MotorTempEl", 33.0, 3.0, 0.05, "C", 60.0),
    ("DriveCabinetTemp", 27.0, 1.2, 0.03, "C", 40.0),
    ("Supply48V", 48.1, 0.05, 0.01, "V", 49.0),
    ("Supply12V", 12.02, 0.02, 0.005, "V", 12.5),
    ("MotorCurrentAz", 3.2, 1.0, 0.1, "A", 8.0),
    ("Vibration", 0.03, 0.01, 0.004, "g", 0.2),
    ("CabinHumidity", 30.0, 3.0, 0.2, "%", 60.0),
];
/// Weather stations, `WEATHER.Station1` ….
const WEATHER_STATIONS: usize = 6;
/// Correlator computers, `CORRELATOR.Node01` ….
const CORRELATOR_NODES: usize = 32;
/// Archive disks, `ARCHIVE.Disk1` ….
const ARCHIVE_DISKS: usize = 8;

/// How an object's value is made.
#[derive(Debug)]
enum Model {
    Mount {
        antenna: usize,
        gusts: Signal,
    },
    Receiver {
        antenna: usize,
        power: Signal,
    },
    Cryostat {
        stage1: Signal,
        stage2: Signal,
        pressure: Signal,
    },
    Health {
        index: usize,
        started: f64,
    },
    Sensor {
        reading: Signal,
        unit: &'static str,
        limit: f64,
    },
    Weather {
        temperature: Signal,
        humidity: Signal,
        wind: Signal,
    },
    Correlator,
    Node {
        cpu: Signal,
        temperature: Signal,
        packets: Signal,
    },
    Array,
}

/// One information object.
#[derive(Debug)]
pub struct Object {
    /// `Namespace.Object`.
    pub name: String,
    /// Its type (one of [`super::types::all_types`]).
    pub type_name: &'static str,
    every_ticks: u64,
    phase: u64,
    model: Model,
}

/// Every object of the facility.
#[derive(Debug)]
pub struct Objects {
    rng: Rng,
    list: Vec<Object>,
}

impl Objects {
    /// Returns the objects, drawing from their own generator.
    pub fn new(mut rng: Rng) -> Objects {
        let mut list = Vec::new();
        for antenna in 0..ANTENNAS {
            antenna_objects(antenna, &mut rng, &mut list);
        }
        central_objects(&mut rng, &mut list);
        // Spread the updates of each rate evenly over the ticks of its period.
        let mut seen_per_period = [0u64; TICKS_PER_S as usize + 1];
        for object in &mut list {
            let seen = &mut seen_per_period[object.every_ticks as usize];
            object.phase = *seen % object.every_ticks;
            *seen += 1;
        }
        Objects { rng, list }
    }

    /// Returns how many objects there are.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Returns how many updates per second the objects make.
    pub fn updates_per_s(&self) -> u64 {
        self.list.iter().map(|o| TICKS_PER_S / o.every_ticks).sum()
    }

    /// Returns name, type and attributes of every object due at `tick`.
    pub fn due(
        &mut self,
        tick: u64,
        facility: &Facility,
    ) -> Vec<(String, &'static str, Vec<Field>)> {
        let mut updates = Vec::new();
        for object in &mut self.list {
            if tick % object.every_ticks == object.phase {
                let attributes = value(&mut object.model, facility, &mut self.rng);
                updates.push((object.name.clone(), object.type_name, attributes));
            }
        }
        updates
    }
}

fn object(name: String, type_name: &'static str, hz: u64, model: Model) -> Object {
    Object {
        name,
        type_name,
        every_ticks: TICKS_PER_S / hz,
        phase: 0,
        model,
    }
}

fn antenna_objects(antenna: usize, rng: &mut Rng, list: &mut Vec<Object>) {
    let prefix = format!("ANTENNA.DV{:02}", antenna + 1);
    let gusts = Signal::new(1.0, 0.1, 40.0, 0.05, rng);
    list.push(object(
        format!("{prefix}.Mount"),
        "AntennaMount",
        5,
        Model::Mount { antenna, gusts },
    ));
    let power = Signal::new(-30.0, 0.6, 120.0, 0.05, rng);
    list.push(object(
        format!("{prefix}.Receiver"),
        "Receiver",
        2,
        Model::Receiver { antenna, power },
    ));
    let cryostat = Model::Cryostat {
        stage1: Signal::new(41.0 + rng.range(-2.0, 2.0), 0.3, 900.0, 0.02, rng),
        stage2: Signal::new(4.02 + rng.range(-0.05, 0.05), 0.01, 600.0, 0.001, rng),
        pressure: Signal::new(2.0e-7, 3.0e-8, 1200.0, 2.0e-9, rng),
    };
    list.push(object(
        format!("{prefix}.Cryostat"),
        "Cryostat",
        1,
        cryostat,
    ));
    let started = -rng.range(3600.0, 30.0 * 86400.0);
    list.push(object(
        format!("{prefix}.Health"),
        "SubsystemHealth",
        1,
        Model::Health {
            index: antenna,
            started,
        },
    ));
    for (name, base, swing, noise, unit, limit) in ANTENNA_SENSORS {
        let reading = Signal::new(base, swing, rng.range(300.0, 1800.0), noise, rng);
        list.push(object(
            format!("{prefix}.Sensor.{name}"),
            "Sensor",
            1,
            Model::Sensor {
                reading,
                unit,
                limit,
            },
        ));
    }
}

fn central_objects(rng: &mut Rng, list: &mut Vec<Object>) {
    for station in 1..=WEATHER_STATIONS {
        let model = Model::Weather {
            temperature: Signal::new(rng.range(-0.5, 0.5), 0.2, 200.0, 0.05, rng),
            humidity: Signal::new(rng.range(-2.0, 2.0), 1.0, 300.0, 0.2, rng),
            wind: Signal::new(rng.range(0.85, 1.15), 0.1, 60.0, 0.05, rng),
        };
        list.push(object(
            format!("WEATHER.Station{station}"),
            "Weather",
            2,
            model,
        ));
    }
    list.push(object(
        "CORRELATOR.Status".to_string(),
        "CorrelatorStatus",
        1,
        Model::Correlator,
    ));
    for node in 1..=CORRELATOR_NODES {
        let model = Model::Node {
            cpu: Signal::new(55.0, 15.0, rng.range(60.0, 300.0), 2.0, rng),
            temperature: Signal::new(rng.range(45.0, 55.0), 2.0, 600.0, 0.1, rng),
            packets: Signal::new(120_000.0, 8_000.0, 90.0, 1_500.0, rng),
        };
        list.push(object(
            format!("CORRELATOR.Node{node:02}"),
            "ComputeNode",
            1,
            model,
        ));
    }
    list.push(object(
        "CONTROL.Array".to_string(),
        "ArrayStatus",
        1,
        Model::Array,
    ));
    for (offset, system) in SUBSYSTEMS.iter().enumerate() {
        let started = -rng.range(3600.0, 30.0 * 86400.0);
        let model = Model::Health {
            index: ANTENNAS + offset,
            started,
        };
        list.push(object(
            format!("{system}.Health"),
            "SubsystemHealth",
            1,
            model,
        ));
    }
    for disk in 1..=ARCHIVE_DISKS {
        let reading = Signal::new(rng.range(55.0, 85.0), 0.5, 3600.0, 0.01, rng).with_drift(0.01);
        let model = Model::Sensor {
            reading,
            unit: "%",
            limit: 90.0,
        };
        list.push(object(format!("ARCHIVE.Disk{disk}"), "Sensor", 1, model));
    }
}

fn value(model: &mut Model, facility: &Facility, rng: &mut Rng) -> Vec<Field> {
    let t = facility.t;
    let weather = &facility.weather;
    match model {
        Model::Mount { antenna, gusts } => {
            let a = &facility.antennas[*antenna];
            let facing = (a.az - weather.wind_dir_deg).to_radians().cos().abs();
            let load =
                0.066 * weather.wind_speed_ms.powi(2) * (0.6 + 0.4 * facing) * gusts.sample(t, rng);
            vec![
                float("az", round_to(a.az, 4)),
                float("el", round_to(a.el, 4)),
                flag("tracking", a.tracking),
                float("wind_load", round_to(load.max(0.0), 2)),
            ]
        }
        Model::Receiver { antenna, power } => {
            let a = &facility.antennas[*antenna];
            let dbm = if a.locked {
                power.sample(t, rng)
            } else {
                -45.0 + rng.normal()
            };
            vec![
                int("band", i64::from(a.band)),
                float("lo_ghz", a.lo_ghz()),
                flag("locked", a.locked),
                float("if_power_dbm", round_to(dbm, 2)),
            ]
        }
        Model::Cryostat {
            stage1,
            stage2,
            pressure,
        } => vec![
            float("stage1_k", round_to(stage1.sample(t, rng), 2)),
            float("stage2_k", round_to(stage2.sample(t, rng), 4)),
            float("pressure_mbar", pressure.sample(t, rng).max(1.0e-9)),
        ],
        Model::Health { index, started } => {
            let health = &facility.health[*index];
            vec![
                text("state", facility.state(*index)),
                int("errors", i64::from(health.errors)),
                int("warnings", i64::from(health.warnings)),
                int("uptime_s", (t - *started) as i64),
            ]
        }
        Model::Sensor {
            reading,
            unit,
            limit,
        } => {
            let value = round_to(reading.sample(t, rng), 3);
            vec![
                float("value", value),
                text("unit", unit),
                flag("ok", value < *limit),
            ]
        }
        Model::Weather {
            temperature,
            humidity,
            wind,
        } => vec![
            float(
                "temperature_c",
                round_to(weather.temperature_c + temperature.sample(t, rng), 2),
            ),
            float(
                "humidity",
                round_to(
                    (weather.humidity + humidity.sample(t, rng)).clamp(1.0, 100.0),
                    1,
                ),
            ),
            float(
                "wind_speed_ms",
                round_to((weather.wind_speed_ms * wind.sample(t, rng)).max(0.0), 2),
            ),
            float(
                "wind_dir_deg",
                round_to(
                    (weather.wind_dir_deg + 5.0 * rng.normal()).rem_euclid(360.0),
                    1,
                ),
            ),
        ],
        Model::Correlator => {
            let observing = facility.run.state == "OBSERVING";
            let antennas = if observing { facility.tracking() } else { 0 };
            let baselines = (antennas * antennas.saturating_sub(1) / 2) as f64;
            let dump = if observing { 62.5 } else { 0.0 };
            vec![
                text("mode", if observing { "CORRELATING" } else { "IDLE" }),
                int("antennas", antennas as i64),
                float("dump_rate_hz", dump),
                float(
                    "data_rate_mbps",
                    round_to(baselines * dump * 0.256 * (1.0 + 0.02 * rng.normal()), 1),
                ),
            ]
        }
        Model::Node {
            cpu,
            temperature,
            packets,
        } => vec![
            float(
                "cpu_load",
                round_to(cpu.sample(t, rng).clamp(0.0, 100.0), 1),
            ),
            float("temperature_c", round_to(temperature.sample(t, rng), 2)),
            float("packets_per_s", packets.sample(t, rng).max(0.0).round()),
        ],
        Model::Array => {
            let run = &facility.run;
            vec![
                int("run", i64::from(run.number)),
                int("scan", i64::from(run.scan)),
                text("state", run.state),
                text("source", run.source),
            ]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_hundred_objects_update_at_one_to_five_hertz() {
        let mut rng = Rng::new(9);
        let facility = Facility::new(&mut rng);
        let mut objects = Objects::new(rng.fork());
        assert!(objects.len() >= 200, "{}", objects.len());
        let mut updates = 0;
        for tick in 0..TICKS_PER_S {
            let due = objects.due(tick, &facility);
            assert!(
                due.len() < objects.len() / 2,
                "updates are spread over the ticks"
            );
            updates += due.len() as u64;
        }
        assert_eq!(updates, objects.updates_per_s());
        let mounts = objects
            .list
            .iter()
            .filter(|o| o.type_name == "AntennaMount")
            .count();
        assert_eq!(mounts, ANTENNAS);
    }
}
