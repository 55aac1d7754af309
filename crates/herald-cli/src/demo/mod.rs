//! The simulated facility behind `herald serve --demo` and `herald demo`: a radio telescope
//! of twelve antennas with its correlator, control system, weather stations and archive,
//! logging, publishing run-control commands and updating a few hundred information objects,
//! as a client of a Herald server — so the UI has something alive to show.
//!
//! # Layout
//! - `rng.rs`: [`Rng`], a seeded xorshift generator (`--demo-seed`).
//! - `signal.rs`: [`Signal`](signal::Signal), smooth sine + drift + noise values.
//! - `antenna.rs`, `facility.rs`: the state of the telescope that everything else reads.
//! - `source.rs`: the programs that log, with their origins; `templates/`: their lines.
//! - `traffic.rs`: everyday log chatter; `storm.rs`: the bursts; `run_control.rs`: commands.
//! - `types.rs`, `objects.rs`: the information types and objects and how their values move.
//!
//! The driver below steps everything every [`TICK`] and sends the result through one
//! [`Client`]: records with `publish` (batched by the client), object updates with `set_info`.

mod antenna;
mod facility;
mod objects;
mod rng;
mod run_control;
mod signal;
mod source;
mod storm;
mod templates;
mod traffic;
mod types;

use std::time::Duration;

use anyhow::Context;
use herald_client::{Client, ClientOptions};
use herald_proto::info::UpdateMode;
use herald_proto::value::Field;
use herald_proto::Value;
use tokio::sync::watch;

use facility::Facility;
use objects::Objects;
use rng::Rng;
use run_control::RunControl;
use source::Source;
use storm::Storms;
use traffic::LogTraffic;

/// Seed used when none is given: every run without `--demo-seed` looks the same.
pub const DEFAULT_SEED: u64 = 1;
/// How often the simulation steps.
pub const TICK: Duration = Duration::from_millis(100);
/// Client name the simulation connects with (shown by `herald monitor`).
pub const CLIENT_NAME: &str = "herald-demo";
/// Longest wait for the last records when the simulation stops.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(2);

/// The whole simulation.
#[derive(Debug)]
pub struct Simulation {
    rng: Rng,
    facility: Facility,
    sources: Vec<Source>,
    traffic: LogTraffic,
    storms: Storms,
    run_control: RunControl,
    objects: Objects,
    tick: u64,
}

impl Simulation {
    /// Returns the simulation for `seed`.
    pub fn new(seed: u64) -> Simulation {
        let mut rng = Rng::new(seed);
        let facility = Facility::new(&mut rng);
        let sources = source::all_sources(&facility, &mut rng);
        Simulation {
            traffic: LogTraffic::new(rng.fork()),
            storms: Storms::new(rng.fork()),
            run_control: RunControl::new(rng.fork()),
            objects: Objects::new(rng.fork()),
            rng,
            facility,
            sources,
            tick: 0,
        }
    }

    /// Returns one line saying what is simulated.
    pub fn summary(&self) -> String {
        let log_rate: f64 = self.sources.iter().map(|s| s.role.rate_per_s()).sum();
        format!(
            "{} antennas, {} log sources (~{log_rate:.0} records/s, storms of 1000+/s every few minutes), \
             {} information objects of {} types ({} updates/s), run-control messages on {}",
            self.facility.antennas.len(),
            self.sources.len(),
            self.objects.len(),
            types::all_types().len(),
            self.objects.updates_per_s(),
            run_control::COMMAND_SUBJECT,
        )
    }

    /// Declares the information types.
    ///
    /// # Errors
    /// The client's error.
    pub async fn declare(&self, client: &Client) -> anyhow::Result<()> {
        for data in types::all_types() {
            let name = data.name.clone();
            client
                .declare_type(data)
                .await
                .with_context(|| format!("declaring type {name}"))?;
        }
        Ok(())
    }

    /// Advances one tick and sends what happened in it.
    ///
    /// # Errors
    /// The client's error.
    pub async fn step(&mut self, client: &Client) -> anyhow::Result<()> {
        let dt = TICK.as_secs_f64();
        self.facility.step(dt, &mut self.rng);
        let mut records = Vec::new();
        self.run_control.tick(&mut self.facility, &mut records);
        self.traffic
            .tick(dt, &mut self.facility, &self.sources, &mut records);
        self.storms
            .tick(dt, &mut self.facility, &self.sources, &mut records);
        for record in &records {
            client.publish(record).await?;
        }
        for (name, type_name, attributes) in self.objects.due(self.tick, &self.facility) {
            client
                .set_info(&name, Some(type_name), attributes, UpdateMode::Upsert)
                .await
                .with_context(|| format!("updating {name}"))?;
        }
        self.tick += 1;
        Ok(())
    }
}

/// Connects to `url` and runs the simulation for `seed` until `stop` turns true.
///
/// # Errors
/// The connection failed, or the server refused something the simulation sent.
pub async fn simulate(url: &str, seed: u64, mut stop: watch::Receiver<bool>) -> anyhow::Result<()> {
    let options = ClientOptions {
        name: CLIENT_NAME.to_string(),
        ..ClientOptions::default()
    };
    let client = Client::connect_with(url, options)
        .await
        .with_context(|| format!("connecting to {url}"))?;
    let mut simulation = Simulation::new(seed);
    simulation.declare(&client).await?;
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    while !*stop.borrow() {
        tokio::select! {
            _ = ticker.tick() => simulation.step(&client).await?,
            // A dropped sender means no one can stop us any more: stop now.
            changed = stop.changed() => if changed.is_err() { break },
        }
    }
    client.close(CLOSE_TIMEOUT).await?;
    Ok(())
}

/// A simulation running in the background, as `herald serve --demo` starts it.
#[derive(Debug)]
pub struct DemoHandle {
    stop: watch::Sender<bool>,
    task: tokio::task::JoinHandle<()>,
}

impl DemoHandle {
    /// Starts the simulation against `url`; a failure is logged, never fatal to the caller.
    pub fn spawn(url: String, seed: u64) -> DemoHandle {
        let (stop, stopped) = watch::channel(false);
        let task = tokio::spawn(async move {
            if let Err(error) = simulate(&url, seed, stopped).await {
                tracing::warn!(error = format!("{error:#}"), "demo simulation stopped");
            }
        });
        DemoHandle { stop, task }
    }

    /// Stops the simulation and waits (briefly) until its client has closed.
    pub async fn stop(self) {
        let _ = self.stop.send(true);
        let _ = tokio::time::timeout(2 * CLOSE_TIMEOUT, self.task).await;
    }
}

fn float(name: &str, value: f64) -> Field {
    (name.to_string(), Value::Float(value))
}

fn int(name: &str, value: i64) -> Field {
    (name.to_string(), Value::Int(value))
}

fn text(name: &str, value: &str) -> Field {
    (name.to_string(), Value::Str(value.to_string()))
}

fn flag(name: &str, value: bool) -> Field {
    (name.to_string(), Value::Bool(value))
}
