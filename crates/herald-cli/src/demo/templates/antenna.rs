//! The lines of an antenna's mount, receiver and cryostat control.

use herald_proto::Priority::*;

use super::{reading, Template};
use crate::demo::antenna::Antenna;
use crate::demo::facility::Facility;
use crate::demo::source::Source;
use crate::demo::{int, text};

fn antenna<'a>(facility: &'a Facility, source: &Source) -> &'a Antenna {
    &facility.antennas[source.antenna.unwrap_or(0)]
}

pub const MOUNT: &[Template] = &[
    Template {
        priority: Debug,
        weight: 450,
        at: ("servoLoop", 212),
        render: |_, f, s| {
            let a = antenna(f, s);
            (
                format!("servo update az={:.4} el={:.4}", a.az, a.el),
                vec![],
            )
        },
    },
    Template {
        priority: Info,
        weight: 350,
        at: ("trackingMonitor", 388),
        render: |_, f, s| {
            let a = antenna(f, s);
            let state = if a.tracking { "on source" } else { "slewing" };
            (
                format!("mount {state}"),
                vec![reading("az", a.az), reading("el", a.el)],
            )
        },
    },
    Template {
        priority: Notice,
        weight: 80,
        at: ("setPointingModel", 95),
        render: |rng, _, _| {
            (
                format!("pointing model updated: {} terms", 18 + rng.below(6)),
                vec![],
            )
        },
    },
    Template {
        priority: Warning,
        weight: 90,
        at: ("checkWindLoad", 441),
        render: |rng, f, _| {
            let gust = f.weather.wind_speed_ms + rng.range(2.0, 6.0);
            (
                format!("wind gust {gust:.1} m/s: servo error above 2 arcsec"),
                vec![
                    reading("gust_ms", gust),
                    reading("error_arcsec", rng.range(2.0, 4.5)),
                ],
            )
        },
    },
    Template {
        priority: Error,
        weight: 10,
        at: ("readEncoder", 517),
        render: |rng, _, _| {
            let axis = *rng.pick(&["az", "el"]);
            (
                format!("encoder read timeout on {axis} axis, retrying"),
                vec![
                    text("axis", axis),
                    int("timeout_ms", 50),
                    int("retries", 1 + rng.below(3) as i64),
                ],
            )
        },
    },
];

pub const RECEIVER: &[Template] = &[
    Template {
        priority: Debug,
        weight: 450,
        at: ("readTotalPower", 173),
        render: |rng, f, s| {
            let a = antenna(f, s);
            (
                format!(
                    "total power band {} = {:.2} dBm",
                    a.band,
                    rng.range(-32.0, -28.0)
                ),
                vec![],
            )
        },
    },
    Template {
        priority: Info,
        weight: 350,
        at: ("lockMonitor", 260),
        render: |_, f, s| {
            let a = antenna(f, s);
            (
                format!("LO locked at {:.3} GHz", a.lo_ghz()),
                vec![
                    int("band", i64::from(a.band)),
                    reading("lo_ghz", a.lo_ghz()),
                ],
            )
        },
    },
    Template {
        priority: Notice,
        weight: 70,
        at: ("optimizeBias", 612),
        render: |rng, _, _| {
            (
                format!("SIS mixer bias re-optimized: {:.2} mV", rng.range(2.1, 2.4)),
                vec![],
            )
        },
    },
    Template {
        priority: Warning,
        weight: 100,
        at: ("checkIfPower", 301),
        render: |rng, _, _| {
            let power = rng.range(-38.0, -35.0);
            (
                format!("IF power {power:.1} dBm below nominal"),
                vec![reading("if_power_dbm", power)],
            )
        },
    },
    Template {
        priority: Error,
        weight: 10,
        at: ("setAttenuator", 355),
        render: |rng, _, _| {
            let step = rng.below(16) as i64;
            let polarization = if rng.below(2) == 0 { "X" } else { "Y" };
            (
                format!("attenuator did not reach step {step}"),
                vec![int("step", step), text("polarization", polarization)],
            )
        },
    },
];

pub const CRYOSTAT: &[Template] = &[
    Template {
        priority: Debug,
        weight: 500,
        at: ("pollSensors", 88),
        render: |rng, _, _| {
            (
                format!("compressor cycle {:.2} Hz", rng.range(1.1, 1.3)),
                vec![],
            )
        },
    },
    Template {
        priority: Info,
        weight: 400,
        at: ("reportTemperatures", 142),
        render: |rng, _, _| {
            let stage2 = rng.range(3.95, 4.1);
            (
                format!("stage 2 at {stage2:.3} K"),
                vec![reading("stage2_k", stage2)],
            )
        },
    },
    Template {
        priority: Warning,
        weight: 60,
        at: ("checkVacuum", 231),
        render: |rng, _, _| {
            let pressure = rng.range(2.0e-6, 6.0e-6);
            (
                format!("vacuum pressure {pressure:.1e} mbar rising"),
                vec![reading("pressure_mbar", pressure)],
            )
        },
    },
    Template {
        priority: Error,
        weight: 8,
        at: ("heliumCompressor", 310),
        render: |rng, _, _| {
            let pressure = rng.range(14.5, 15.5);
            (
                format!("helium supply pressure {pressure:.1} bar out of range"),
                vec![reading("supply_bar", pressure)],
            )
        },
    },
    Template {
        priority: Critical,
        weight: 1,
        at: ("checkStage2", 402),
        render: |rng, _, _| {
            let kelvin = rng.range(4.6, 5.2);
            (
                format!("stage 2 temperature {kelvin:.2} K above limit 4.5 K: receiver unusable"),
                vec![reading("stage2_k", kelvin), reading("limit_k", 4.5)],
            )
        },
    },
];
