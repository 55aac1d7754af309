//! `herald demo`: run the simulated facility against a server that is already running.

use std::process::ExitCode;

use tokio::sync::watch;

use super::ServerArgs;
use crate::demo::{self, Simulation};

/// Simulate a radio telescope against a running server.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Seed of the simulation: the same seed gives the same run.
    #[arg(long, default_value_t = demo::DEFAULT_SEED)]
    seed: u64,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    eprintln!("herald demo: simulating against {}", args.server.server);
    eprintln!("  {}", Simulation::new(args.seed).summary());
    eprintln!("  stop:   Ctrl-C");
    let (stop, stopped) = watch::channel(false);
    let simulation = demo::simulate(&args.server.server, args.seed, stopped);
    tokio::pin!(simulation);
    tokio::select! {
        result = &mut simulation => result?,
        () = super::serve::shutdown_signal() => {
            let _ = stop.send(true);
            simulation.await?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
