//! The log lines each kind of source writes, with their priority, relative weight, routine
//! and source line, and how their text and fields are made: `antenna.rs` for the antennas' mount,
//! receiver and cryostat, `central.rs` for the correlator, control, weather and archive.

mod antenna;
mod central;

use herald_proto::value::Field;
use herald_proto::Priority;

use super::facility::Facility;
use super::float;
use super::rng::Rng;
use super::signal::significant;
use super::source::{Role, Source};

/// Makes the text and fields of one line.
pub type Render = fn(&mut Rng, &Facility, &Source) -> (String, Vec<Field>);

/// One kind of log line.
pub struct Template {
    /// Its priority.
    pub priority: Priority,
    /// How often it comes, relative to the other lines of its role.
    pub weight: u32,
    /// Routine and line of the source file it comes from.
    pub at: (&'static str, u64),
    /// Its text and fields.
    pub render: Render,
}

/// Returns a line of `role`, chosen by weight.
pub fn choose(role: Role, rng: &mut Rng) -> &'static Template {
    let templates = templates(role);
    let total: u32 = templates.iter().map(|t| t.weight).sum();
    let mut ticket = rng.below(total as usize) as u32;
    for template in templates {
        if ticket < template.weight {
            return template;
        }
        ticket -= template.weight;
    }
    &templates[0]
}

fn templates(role: Role) -> &'static [Template] {
    match role {
        Role::Mount => antenna::MOUNT,
        Role::Receiver => antenna::RECEIVER,
        Role::Cryostat => antenna::CRYOSTAT,
        Role::Correlator => central::CORRELATOR,
        Role::Control => central::CONTROL,
        Role::Weather => central::WEATHER,
        Role::Archive => central::ARCHIVE,
    }
}

/// Returns a field holding `value` to four significant digits, as an instrument reports it.
pub(super) fn reading(name: &str, value: f64) -> Field {
    float(name, significant(value, 4))
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::Priority::Info;

    #[test]
    fn every_role_mostly_chatters_and_sometimes_warns() {
        let mut rng = Rng::new(5);
        for role in [
            Role::Mount,
            Role::Receiver,
            Role::Cryostat,
            Role::Correlator,
            Role::Control,
            Role::Weather,
            Role::Archive,
        ] {
            let mut low = 0;
            for _ in 0..1000 {
                if choose(role, &mut rng).priority <= Info {
                    low += 1;
                }
            }
            assert!((700..1000).contains(&low), "{role:?}: {low}");
        }
    }
}
