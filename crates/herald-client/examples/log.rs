//! Logs a warning and an error about an antenna mount, with origin and fields.
//!
//! Run a server (`herald serve`), then:
//!     cargo run -p herald-client --example log -- [herald://127.0.0.1:7400]

use std::time::Duration;

use herald_client::origin::local_origin;
use herald_client::Client;
use herald_proto::{Kind, Priority, Record, Value};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "herald://127.0.0.1:7400".to_string());
    let client = Client::connect(&url).await?;
    client
        .log(Priority::Warning, "ANTENNA.DV01.Mount", "encoder fault")
        .await?;
    let record = Record {
        priority: Priority::Error,
        audience: vec!["operator".to_string()],
        origin: local_origin(),
        text: "azimuth axis stopped".to_string(),
        fields: vec![
            ("axis".to_string(), Value::from("az")),
            ("position_deg".to_string(), Value::Float(181.25)),
        ],
        ..Record::new(Kind::Log, "ANTENNA.DV01.Mount")
    };
    client.publish(&record).await?;
    // Flush so both records are with the server before the program exits.
    client.flush(Duration::from_secs(5)).await?;
    println!("logged 2 records");
    Ok(())
}
