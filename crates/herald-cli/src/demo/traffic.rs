//! `LogTraffic`: the everyday log chatter of every source — a few tens of records per
//! second in all, mostly DEBUG and INFO, some NOTICE and WARNING, an occasional ERROR and,
//! rarely, CRITICAL or ALERT.

use herald_proto::{Priority, Record};

use super::facility::Facility;
use super::rng::Rng;
use super::source::Source;
use super::templates;

/// How long a subsystem shows `DEGRADED` after an ERROR or worse, seconds.
const DEGRADED_AFTER_ERROR_S: f64 = 10.0;

/// The everyday log traffic.
#[derive(Debug)]
pub struct LogTraffic {
    rng: Rng,
}

impl LogTraffic {
    /// Returns the traffic, drawing from its own generator.
    pub fn new(rng: Rng) -> LogTraffic {
        LogTraffic { rng }
    }

    /// Appends to `out` the records every source writes in the next `dt` seconds.
    pub fn tick(
        &mut self,
        dt: f64,
        facility: &mut Facility,
        sources: &[Source],
        out: &mut Vec<Record>,
    ) {
        for source in sources {
            let count = self.rng.poisson(source.role.rate_per_s() * dt);
            for _ in 0..count {
                let template = templates::choose(source.role, &mut self.rng);
                let (text, fields) = (template.render)(&mut self.rng, facility, source);
                let record =
                    source.record(&mut self.rng, template.priority, template.at, text, fields);
                count_in_health(facility, source.health, template.priority);
                out.push(record);
            }
        }
    }
}

/// Counts a record of `priority` in health entry `index`.
pub fn count_in_health(facility: &mut Facility, index: usize, priority: Priority) {
    let now = facility.t;
    let health = &mut facility.health[index];
    if priority >= Priority::Error {
        health.errors += 1;
        health.degraded_until = health.degraded_until.max(now + DEGRADED_AFTER_ERROR_S);
    } else if priority == Priority::Warning {
        health.warnings += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::demo::source::all_sources;

    #[test]
    fn the_facility_logs_a_few_tens_of_records_per_second_of_several_priorities() {
        let mut rng = Rng::new(11);
        let mut facility = Facility::new(&mut rng);
        let sources = all_sources(&facility, &mut rng);
        let mut traffic = LogTraffic::new(rng.fork());
        let mut out = Vec::new();
        for _ in 0..600 {
            traffic.tick(0.1, &mut facility, &sources, &mut out);
        }
        let per_s = out.len() as f64 / 60.0;
        assert!((20.0..50.0).contains(&per_s), "{per_s} records/s");
        for priority in [
            Priority::Debug,
            Priority::Info,
            Priority::Notice,
            Priority::Warning,
            Priority::Error,
        ] {
            assert!(
                out.iter().any(|r| r.priority == priority),
                "no {priority:?}"
            );
        }
        assert!(out
            .iter()
            .all(|r| !r.origin.host.is_empty() && r.origin.line.is_some()));
    }
}
