//! `Storms`: now and then one source bursts to more than a thousand records per second for a
//! few seconds — a receiver losing lock, a mount servo oscillating, a correlator node
//! timing out — and then recovers with a NOTICE. That is what the server's storm handling
//! and the UI's live view are for.

use herald_proto::value::Field;
use herald_proto::{Priority, Record};

use super::facility::Facility;
use super::rng::Rng;
use super::signal::significant;
use super::source::{Role, Source};
use super::traffic::count_in_health;
use super::{float, int};

/// When the first storm starts, seconds after the simulation (so a newcomer sees one soon).
const FIRST_STORM_S: (f64, f64) = (15.0, 30.0);
/// Quiet time between two storms, seconds.
const BETWEEN_STORMS_S: (f64, f64) = (60.0, 180.0);
/// How long a storm lasts, seconds.
const STORM_LENGTH_S: (f64, f64) = (2.0, 6.0);
/// Records per second during a storm.
const STORM_RATE_PER_S: (f64, f64) = (1000.0, 1600.0);

/// What goes wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StormKind {
    /// An antenna receiver's local oscillator loses lock.
    ReceiverLock,
    /// An antenna mount's servo oscillates.
    MountOscillation,
    /// A correlator node stops answering.
    CorrelatorNode,
}

#[derive(Debug)]
struct Storm {
    kind: StormKind,
    source: usize,
    start: f64,
    end: f64,
    rate_per_s: f64,
    emitted: u64,
}

/// The storm schedule: at most one storm at a time.
#[derive(Debug)]
pub struct Storms {
    rng: Rng,
    next_start: f64,
    active: Option<Storm>,
}

impl Storms {
    /// Returns the schedule, drawing from its own generator.
    pub fn new(mut rng: Rng) -> Storms {
        let next_start = rng.range(FIRST_STORM_S.0, FIRST_STORM_S.1);
        Storms {
            rng,
            next_start,
            active: None,
        }
    }

    /// Appends to `out` the storm records of the next `dt` seconds, starting or ending a
    /// storm when it is due.
    pub fn tick(
        &mut self,
        dt: f64,
        facility: &mut Facility,
        sources: &[Source],
        out: &mut Vec<Record>,
    ) {
        let now = facility.t;
        if self.active.is_none() && now >= self.next_start {
            self.start(facility, sources, out);
        }
        let Some(storm) = self.active.as_mut() else {
            return;
        };
        let source = &sources[storm.source];
        let count = self.rng.poisson(storm.rate_per_s * dt);
        for _ in 0..count {
            storm.emitted += 1;
            let (priority, at, text, fields) = burst_line(storm, &mut self.rng);
            out.push(source.record(&mut self.rng, priority, at, text, fields));
        }
        facility.health[source.health].degraded_until = now + 1.0;
        if now >= storm.end {
            self.finish(facility, sources, out);
        }
    }

    fn start(&mut self, facility: &mut Facility, sources: &[Source], out: &mut Vec<Record>) {
        let rng = &mut self.rng;
        let kind = *rng.pick(&[
            StormKind::ReceiverLock,
            StormKind::ReceiverLock,
            StormKind::MountOscillation,
            StormKind::CorrelatorNode,
        ]);
        let role = match kind {
            StormKind::ReceiverLock => Role::Receiver,
            StormKind::MountOscillation => Role::Mount,
            StormKind::CorrelatorNode => Role::Correlator,
        };
        let candidates: Vec<usize> = (0..sources.len())
            .filter(|&i| sources[i].role == role)
            .collect();
        let index = *rng.pick(&candidates);
        let source = &sources[index];
        let (priority, at, text) = match kind {
            StormKind::ReceiverLock => (
                Priority::Error,
                ("lockMonitor", 274),
                "LO lost lock: PLL unlocked, relocking",
            ),
            StormKind::MountOscillation => (
                Priority::Error,
                ("servoLoop", 240),
                "azimuth servo oscillating: tracking stopped",
            ),
            StormKind::CorrelatorNode => (
                Priority::Error,
                ("receiveFrames", 1040),
                "node not answering: frames timing out",
            ),
        };
        if let (StormKind::ReceiverLock, Some(antenna)) = (kind, source.antenna) {
            facility.antennas[antenna].locked = false;
        }
        count_in_health(facility, source.health, priority);
        out.push(source.record(rng, priority, at, text.to_string(), vec![]));
        let start = facility.t;
        self.active = Some(Storm {
            kind,
            source: index,
            start,
            end: start + rng.range(STORM_LENGTH_S.0, STORM_LENGTH_S.1),
            rate_per_s: rng.range(STORM_RATE_PER_S.0, STORM_RATE_PER_S.1),
            emitted: 0,
        });
    }

    fn finish(&mut self, facility: &mut Facility, sources: &[Source], out: &mut Vec<Record>) {
        let Some(storm) = self.active.take() else {
            return;
        };
        let source = &sources[storm.source];
        let seconds = facility.t - storm.start;
        let (at, what) = match storm.kind {
            StormKind::ReceiverLock => (("lockMonitor", 290), "LO relocked"),
            StormKind::MountOscillation => {
                (("servoLoop", 251), "servo stable again, tracking resumed")
            }
            StormKind::CorrelatorNode => (("receiveFrames", 1061), "node answering again"),
        };
        if let Some(antenna) = source.antenna {
            facility.antennas[antenna].locked = true;
        }
        let text = format!(
            "{what} after {seconds:.1} s ({} records in the burst)",
            storm.emitted
        );
        let fields = vec![
            reading("duration_s", seconds),
            int("burst_records", storm.emitted as i64),
        ];
        out.push(source.record(&mut self.rng, Priority::Notice, at, text, fields));
        self.next_start = facility.t + self.rng.range(BETWEEN_STORMS_S.0, BETWEEN_STORMS_S.1);
    }
}

type Line = (Priority, (&'static str, u64), String, Vec<Field>);

/// Returns one record of a storm's burst.
fn burst_line(storm: &Storm, rng: &mut Rng) -> Line {
    let attempt = storm.emitted as i64;
    match storm.kind {
        StormKind::ReceiverLock => {
            let phase = rng.range(20.0, 170.0);
            let text =
                format!("PLL unlocked: phase error {phase:.1} deg, relock attempt {attempt}");
            (
                Priority::Warning,
                ("relock", 318),
                text,
                vec![reading("phase_error_deg", phase), int("attempt", attempt)],
            )
        }
        StormKind::MountOscillation => {
            let error = rng.range(8.0, 60.0);
            let text = format!("servo error {error:.1} arcsec exceeds limit 5 arcsec");
            (
                Priority::Error,
                ("servoLoop", 244),
                text,
                vec![reading("error_arcsec", error)],
            )
        }
        StormKind::CorrelatorNode => {
            let text = format!("frame {} timed out after 20 ms", 100_000 + attempt);
            (
                Priority::Warning,
                ("receiveFrames", 1048),
                text,
                vec![int("frame", 100_000 + attempt)],
            )
        }
    }
}

/// Returns a field holding `value` to four significant digits, as an instrument reports it.
fn reading(name: &str, value: f64) -> Field {
    float(name, significant(value, 4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::source::all_sources;

    #[test]
    fn a_storm_bursts_past_a_thousand_per_second_then_ends_with_a_notice() {
        let mut rng = Rng::new(2);
        let mut facility = Facility::new(&mut rng);
        let sources = all_sources(&facility, &mut rng);
        let mut storms = Storms::new(rng.fork());
        let mut per_tick = Vec::new();
        let mut all = Vec::new();
        for _ in 0..400 {
            facility.step(0.1, &mut rng);
            let mut out = Vec::new();
            storms.tick(0.1, &mut facility, &sources, &mut out);
            per_tick.push(out.len());
            all.extend(out);
        }
        assert!(per_tick.iter().any(|&n| n >= 90), "no burst");
        let notice = all
            .iter()
            .position(|r| r.priority == Priority::Notice)
            .expect("a recovery notice");
        assert!(notice > 1000, "the notice comes after the burst");
        assert!(facility.antennas.iter().all(|a| a.locked));
    }
}
