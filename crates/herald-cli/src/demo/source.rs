//! `Source`: one simulated program that logs — its subject, host, process, threads and
//! source file — and the records it makes.

use herald_proto::value::Field;
use herald_proto::{Kind, Origin, Priority, Record};

use super::facility::{Facility, ANTENNAS};
use super::rng::Rng;

/// What kind of program a source is; it decides the texts and the rate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// An antenna's mount control.
    Mount,
    /// An antenna's receiver control.
    Receiver,
    /// An antenna's cryostat control.
    Cryostat,
    /// A correlator quadrant.
    Correlator,
    /// The control system (scheduler, array, executive).
    Control,
    /// A weather station.
    Weather,
    /// The archive's ingest and storage.
    Archive,
}

impl Role {
    /// Mean records per second of one source of this role outside storms.
    pub fn rate_per_s(self) -> f64 {
        match self {
            Role::Mount => 0.8,
            Role::Receiver => 0.5,
            Role::Cryostat => 0.3,
            Role::Correlator => 1.5,
            Role::Control => 1.0,
            Role::Weather => 0.2,
            Role::Archive => 0.8,
        }
    }
}

/// One program that logs.
#[derive(Debug, Clone)]
pub struct Source {
    /// What it does.
    pub role: Role,
    /// Subject of its records, e.g. `ANTENNA.DV03.Receiver`.
    pub subject: String,
    /// Its antenna, if it belongs to one.
    pub antenna: Option<usize>,
    /// Its entry in [`Facility::health`].
    pub health: usize,
    host: String,
    process: String,
    file: &'static str,
    threads: &'static [&'static str],
}

impl Source {
    /// Returns a log record of this source, with a plausible origin.
    pub fn record(
        &self,
        rng: &mut Rng,
        priority: Priority,
        at: (&'static str, u64),
        text: String,
        fields: Vec<Field>,
    ) -> Record {
        let (routine, line) = at;
        let origin = Origin {
            host: self.host.clone(),
            process: self.process.clone(),
            thread: (*rng.pick(self.threads)).to_string(),
            file: self.file.to_string(),
            line: Some(line),
            routine: routine.to_string(),
            ..Origin::default()
        };
        Record {
            priority,
            type_name: "demo".to_string(),
            origin,
            text,
            fields,
            ..Record::new(Kind::Log, self.subject.clone())
        }
    }
}

/// Returns every source of the facility: three per antenna, then the central subsystems.
pub fn all_sources(facility: &Facility, rng: &mut Rng) -> Vec<Source> {
    let mut sources = Vec::new();
    let mut pid = || 1000 + rng.below(30_000);
    for (index, antenna) in facility.antennas.iter().enumerate() {
        let parts = [
            (Role::Mount, "Mount", "mountControl", "MountImpl.cpp"),
            (
                Role::Receiver,
                "Receiver",
                "receiverControl",
                "ReceiverImpl.cpp",
            ),
            (
                Role::Cryostat,
                "Cryostat",
                "cryoControl",
                "CryostatImpl.cpp",
            ),
        ];
        for (role, part, process, file) in parts {
            sources.push(Source {
                role,
                subject: antenna.subject(part),
                antenna: Some(index),
                health: index,
                host: antenna.host(),
                process: format!("{process}[{}]", pid()),
                file,
                threads: &["main", "monitor", "command", "servo"],
            });
        }
    }
    let central = [
        (
            Role::Correlator,
            "CORRELATOR.Q1",
            "cdp-q1",
            "cdpMaster",
            "CorrQuadrant.cpp",
        ),
        (
            Role::Correlator,
            "CORRELATOR.Q2",
            "cdp-q2",
            "cdpMaster",
            "CorrQuadrant.cpp",
        ),
        (
            Role::Correlator,
            "CORRELATOR.Q3",
            "cdp-q3",
            "cdpMaster",
            "CorrQuadrant.cpp",
        ),
        (
            Role::Correlator,
            "CORRELATOR.Q4",
            "cdp-q4",
            "cdpMaster",
            "CorrQuadrant.cpp",
        ),
        (
            Role::Control,
            "CONTROL.Scheduler",
            "gns",
            "scheduler",
            "scheduler.py",
        ),
        (
            Role::Control,
            "CONTROL.Array",
            "gns",
            "arrayExec",
            "ArrayImpl.java",
        ),
        (
            Role::Control,
            "CONTROL.Executive",
            "gns",
            "executive",
            "Executive.java",
        ),
        (
            Role::Weather,
            "WEATHER.Station1",
            "wx1",
            "wsDaemon",
            "station.c",
        ),
        (
            Role::Weather,
            "WEATHER.Station2",
            "wx2",
            "wsDaemon",
            "station.c",
        ),
        (
            Role::Weather,
            "WEATHER.Station3",
            "wx3",
            "wsDaemon",
            "station.c",
        ),
        (
            Role::Archive,
            "ARCHIVE.Ingest",
            "arc-1",
            "ingestd",
            "ingest.rs",
        ),
        (
            Role::Archive,
            "ARCHIVE.Storage",
            "arc-2",
            "storaged",
            "storage.rs",
        ),
    ];
    for (role, subject, host, process, file) in central {
        let system = subject.split('.').next().unwrap_or(subject);
        sources.push(Source {
            role,
            subject: subject.to_string(),
            antenna: None,
            health: Facility::subsystem(system),
            host: host.to_string(),
            process: format!("{process}[{}]", pid()),
            file,
            threads: &["main", "worker-1", "worker-2", "io"],
        });
    }
    debug_assert_eq!(sources.len(), 3 * ANTENNAS + central.len());
    sources
}
