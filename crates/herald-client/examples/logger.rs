//! Logs from a program's hot path without blocking: a few records with the `Logger`, a
//! debug record that only the flight recorder keeps until an error sends it as context, and
//! a record through the `log` crate facade.
//!
//! Run a server (`herald serve`), then:
//!     cargo run -p herald-client --example logger -- [herald://127.0.0.1:7400]

use std::time::Duration;

use herald_client::logger::install_log;
use herald_client::{Client, Logger, LoggerOptions};
use herald_proto::{Priority, Value};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "herald://127.0.0.1:7400".to_string());
    let client = Client::connect(&url).await?;
    let logger = Logger::new(&client, LoggerOptions::new("ANTENNA.DV01.Mount"))?;

    // Below the INFO threshold: not sent, but kept in the flight recorder.
    logger.debug("servo loop gain 0.82");
    logger.warning("encoder fault");
    // An ERROR sends the flight recorder's records just before it, marked as context.
    let fields = vec![
        ("axis".to_string(), Value::from("az")),
        ("position_deg".to_string(), Value::Float(181.25)),
    ];
    logger.log(Priority::Error, "azimuth axis stopped", fields);

    // Existing code that uses the `log` crate sends through the same logger.
    install_log(logger.clone(), log::LevelFilter::Info)?;
    log::info!(target: "ANTENNA.DV01.Drive", "drive {} parked", "az");

    // Close so that every record is with the server before the program exits (the `log`
    // facade holds a clone, so dropping `logger` alone would not close it).
    let dropped = logger.dropped();
    logger.close(Duration::from_secs(5)).await?;
    println!("sent 4 records (1 as flight-recorder context), dropped {dropped}");
    Ok(())
}
