//! `RunControl`: the operator's commands every few seconds — configure, start a run, scan
//! source after source, stop — as messages on `CONTROL.runcontrol.cmd`; each scan points
//! the antennas at a new source.

use herald_proto::{Kind, Record};

use super::facility::Facility;
use super::rng::Rng;
use super::{int, text};

/// Subject of the commands.
pub const COMMAND_SUBJECT: &str = "CONTROL.runcontrol.cmd";
/// Seconds between two commands.
const BETWEEN_COMMANDS_S: (f64, f64) = (3.0, 6.0);
/// Scans in one run.
const SCANS_PER_RUN: (usize, usize) = (3, 8);

/// Sources on the observing list.
const SOURCES: [&str; 8] = [
    "J1924-2914",
    "3C279",
    "J0538-4405",
    "Sgr A*",
    "Orion KL",
    "IRC+10216",
    "M87",
    "TW Hya",
];

/// The run-control sequence.
#[derive(Debug)]
pub struct RunControl {
    rng: Rng,
    next_at: f64,
    scans_left: usize,
}

impl RunControl {
    /// Returns run control, drawing from its own generator; its first command comes at once.
    pub fn new(rng: Rng) -> RunControl {
        RunControl {
            rng,
            next_at: 0.5,
            scans_left: 0,
        }
    }

    /// Appends the next command to `out` when it is due, and applies it to the facility.
    pub fn tick(&mut self, facility: &mut Facility, out: &mut Vec<Record>) {
        if facility.t < self.next_at {
            return;
        }
        self.next_at = facility.t + self.rng.range(BETWEEN_COMMANDS_S.0, BETWEEN_COMMANDS_S.1);
        let command = match facility.run.state {
            "IDLE" => self.configure(facility),
            "CONFIGURED" => self.start(facility),
            _ if self.scans_left == 0 => self.stop(facility),
            _ => self.scan(facility),
        };
        out.push(command);
    }

    fn configure(&mut self, facility: &mut Facility) -> Record {
        let band = *self.rng.pick(&[3u32, 3, 6, 7]);
        for antenna in &mut facility.antennas {
            antenna.band = band;
        }
        facility.run.state = "CONFIGURED";
        let mut record = command("configure", format!("configure array for band {band}"));
        record.fields = vec![
            int("band", i64::from(band)),
            int("antennas", facility.antennas.len() as i64),
        ];
        record
    }

    fn start(&mut self, facility: &mut Facility) -> Record {
        facility.run.number += 1;
        facility.run.scan = 0;
        facility.run.state = "OBSERVING";
        self.scans_left =
            self.rng
                .range(SCANS_PER_RUN.0 as f64, SCANS_PER_RUN.1 as f64) as usize;
        let run = facility.run.number;
        let mut record = command("start", format!("start run {run}"));
        record.fields = vec![int("run", i64::from(run))];
        record
    }

    fn scan(&mut self, facility: &mut Facility) -> Record {
        self.scans_left -= 1;
        let source = *self.rng.pick(&SOURCES);
        let (az, el) = (self.rng.range(0.0, 360.0), self.rng.range(25.0, 80.0));
        for antenna in &mut facility.antennas {
            antenna.point_at(az, el);
        }
        facility.run.scan += 1;
        facility.run.source = source;
        let run = &facility.run;
        let mut record = command(
            "scan",
            format!("run {} scan {} on {source}", run.number, run.scan),
        );
        record.fields = vec![
            int("run", i64::from(run.number)),
            int("scan", i64::from(run.scan)),
            text("source", source),
        ];
        record
    }

    fn stop(&mut self, facility: &mut Facility) -> Record {
        facility.run.state = "IDLE";
        let run = facility.run.number;
        let mut record = command("stop", format!("stop run {run}"));
        record.fields = vec![
            int("run", i64::from(run)),
            int("scans", i64::from(facility.run.scan)),
        ];
        record
    }
}

fn command(type_name: &str, text: String) -> Record {
    Record {
        type_name: type_name.to_string(),
        text,
        origin: herald_proto::Origin {
            host: "gns".to_string(),
            process: "operatorConsole".to_string(),
            thread: "main".to_string(),
            ..herald_proto::Origin::default()
        },
        ..Record::new(Kind::Message, COMMAND_SUBJECT)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_follow_the_run_cycle_every_few_seconds() {
        let mut rng = Rng::new(4);
        let mut facility = Facility::new(&mut rng);
        let mut control = RunControl::new(rng.fork());
        let mut out = Vec::new();
        for _ in 0..1200 {
            facility.step(0.1, &mut rng);
            control.tick(&mut facility, &mut out);
        }
        assert!(
            (20..=45).contains(&out.len()),
            "{} commands in 120 s",
            out.len()
        );
        let types: Vec<&str> = out.iter().map(|r| r.type_name.as_str()).collect();
        assert_eq!(&types[..3], ["configure", "start", "scan"]);
        assert!(types.contains(&"stop"));
        assert!(out
            .iter()
            .all(|r| r.kind == Kind::Message && r.subject == COMMAND_SUBJECT));
    }
}
