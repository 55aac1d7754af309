//! Publishes a few messages on `runcontrol.cmd`.
//!
//! Run a server (`herald serve`), then:
//!     cargo run -p herald-client --example publish -- [herald://127.0.0.1:7400]

use std::time::Duration;

use herald_client::Client;
use herald_proto::{AckLevel, Kind, Record, Value};

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "herald://127.0.0.1:7400".to_string());
    let client = Client::connect(&url).await?;
    for run in 42..45 {
        let record = Record {
            type_name: "start".to_string(),
            text: format!("start run {run}"),
            fields: vec![("run".to_string(), Value::Int(run))],
            ..Record::new(Kind::Message, "runcontrol.cmd")
        };
        // Wait for the server's acknowledgement: the record is routed when this returns.
        client
            .sync_send(&record, AckLevel::Received, Duration::from_secs(5))
            .await?;
        println!("published: start run {run}");
    }
    client.close(Duration::from_secs(5)).await?;
    Ok(())
}
