//! `herald threshold`: set the priority threshold of running loggers, through the server.

use std::process::ExitCode;

use herald_client::logger::threshold_message;
use herald_proto::{Glob, Priority};

use super::ServerArgs;

/// Set the threshold of every logger whose subject matches a glob.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Glob over the loggers' subjects, e.g. `ANTENNA.*`.
    loggers: String,
    /// The lowest priority they should send, e.g. DEBUG.
    priority: String,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let loggers =
        Glob::new(&args.loggers).map_err(|e| anyhow::anyhow!("bad logger pattern: {e}"))?;
    let priority: Priority = args.priority.parse()?;
    args.server
        .send_one("herald-threshold", &threshold_message(&loggers, priority))
        .await?;
    println!("asked loggers on {loggers} to send {priority} and above");
    Ok(ExitCode::SUCCESS)
}
