//! The lines of the correlator, the control system, the weather stations and the archive.

use herald_proto::Priority::*;

use super::{reading, Template};
use crate::demo::{int, text};

pub const CORRELATOR: &[Template] = &[
    Template {
        priority: Debug,
        weight: 500,
        at: ("dumpIntegration", 733),
        render: |rng, f, _| {
            (
                format!(
                    "integration {} dumped, {} baselines",
                    rng.below(100_000),
                    f.antennas.len() * (f.antennas.len() - 1) / 2
                ),
                vec![],
            )
        },
    },
    Template {
        priority: Info,
        weight: 350,
        at: ("startSubscan", 120),
        render: |_, f, _| {
            (
                format!("subscan {} started, {} antennas", f.run.scan, f.tracking()),
                vec![int("scan", i64::from(f.run.scan))],
            )
        },
    },
    Template {
        priority: Notice,
        weight: 60,
        at: ("reconfigure", 64),
        render: |rng, _, _| {
            (
                format!(
                    "spectral window reconfigured: {} channels",
                    *rng.pick(&[1024, 2048, 4096, 8192])
                ),
                vec![],
            )
        },
    },
    Template {
        priority: Warning,
        weight: 70,
        at: ("checkLatency", 890),
        render: |rng, _, _| {
            let ms = rng.range(40.0, 90.0);
            (
                format!("dump latency {ms:.0} ms above 32 ms"),
                vec![reading("latency_ms", ms)],
            )
        },
    },
    Template {
        priority: Error,
        weight: 8,
        at: ("receiveFrames", 1022),
        render: |rng, _, _| {
            let node = 1 + rng.below(32);
            (
                format!("node {node:02}: {} frames lost", 1 + rng.below(40)),
                vec![int("node", node as i64)],
            )
        },
    },
];

pub const CONTROL: &[Template] = &[
    Template {
        priority: Debug,
        weight: 450,
        at: ("heartbeat", 51),
        render: |_, f, _| {
            (
                format!("heartbeat: {} antennas tracking", f.tracking()),
                vec![],
            )
        },
    },
    Template {
        priority: Info,
        weight: 400,
        at: ("reportRun", 210),
        render: |_, f, _| {
            (
                format!(
                    "run {} {} on {}",
                    f.run.number,
                    f.run.state.to_lowercase(),
                    f.run.source
                ),
                vec![
                    int("run", i64::from(f.run.number)),
                    text("source", f.run.source),
                ],
            )
        },
    },
    Template {
        priority: Notice,
        weight: 100,
        at: ("assignAntennas", 330),
        render: |_, f, _| {
            (
                format!(
                    "array of {} antennas assigned to run {}",
                    f.antennas.len(),
                    f.run.number
                ),
                vec![],
            )
        },
    },
    Template {
        priority: Warning,
        weight: 50,
        at: ("checkQueue", 145),
        render: |rng, _, _| {
            (
                format!(
                    "scheduling block queue low: {} blocks left",
                    1 + rng.below(3)
                ),
                vec![],
            )
        },
    },
];

pub const WEATHER: &[Template] = &[
    Template {
        priority: Debug,
        weight: 500,
        at: ("readSensors", 77),
        render: |_, f, _| {
            (
                format!(
                    "wind {:.1} m/s from {:.0}",
                    f.weather.wind_speed_ms, f.weather.wind_dir_deg
                ),
                vec![],
            )
        },
    },
    Template {
        priority: Info,
        weight: 450,
        at: ("publish", 130),
        render: |_, f, _| {
            (
                format!(
                    "temperature {:.1} C, humidity {:.0} %",
                    f.weather.temperature_c, f.weather.humidity
                ),
                vec![reading("temperature_c", f.weather.temperature_c)],
            )
        },
    },
    Template {
        priority: Alert,
        weight: 2,
        at: ("stowCheck", 201),
        render: |rng, _, _| {
            let gust = rng.range(20.5, 24.0);
            (
                format!("wind gust {gust:.1} m/s above stow limit 20 m/s: stow the array"),
                vec![reading("gust_ms", gust)],
            )
        },
    },
];

pub const ARCHIVE: &[Template] = &[
    Template {
        priority: Debug,
        weight: 450,
        at: ("flushBatch", 96),
        render: |rng, _, _| {
            (
                format!("batch of {} rows flushed", 100 + rng.below(900)),
                vec![],
            )
        },
    },
    Template {
        priority: Info,
        weight: 400,
        at: ("ingestFile", 188),
        render: |rng, f, _| {
            let mb = rng.range(50.0, 400.0);
            (
                format!(
                    "ingested uid://X{}/X{:x} ({mb:.0} MB)",
                    f.run.number,
                    rng.below(4096)
                ),
                vec![reading("size_mb", mb)],
            )
        },
    },
    Template {
        priority: Warning,
        weight: 60,
        at: ("checkDisk", 260),
        render: |rng, _, _| {
            let used = rng.range(85.0, 92.0);
            (
                format!("disk {used:.1} % full"),
                vec![reading("used_percent", used)],
            )
        },
    },
    Template {
        priority: Error,
        weight: 6,
        at: ("replicate", 342),
        render: |_, _, _| {
            (
                "replication to the regional centre failed: connection reset".to_string(),
                vec![text("peer", "arc-eu")],
            )
        },
    },
];
