//! Prints the first three messages on `runcontrol.*`, then exits.
//!
//! Run a server (`herald serve`), then:
//!     cargo run -p herald-client --example subscribe -- [herald://127.0.0.1:7400]
//! and publish from another terminal (`cargo run -p herald-client --example publish`).

use herald_client::{Client, Event};
use herald_proto::Filter;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let url = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "herald://127.0.0.1:7400".to_string());
    let client = Client::connect(&url).await?;
    let mut subscription = client.subscribe(Filter::subject("runcontrol.*")?).await?;
    println!("subscribed");
    let mut seen = 0;
    while seen < 3 {
        match subscription.next().await {
            Some(Event::Record(delivered)) => {
                let record = delivered.record();
                println!("{} [{}] {}", record.subject, record.type_name, record.text);
                seen += 1;
            }
            Some(Event::Gap(gap)) => println!("lost {} records", gap.count),
            Some(Event::Interrupted(notice)) => {
                println!("failed over from {} to {}", notice.lost, notice.resumed)
            }
            None => return Err(format!("connection closed: {:?}", client.error()).into()),
        }
    }
    Ok(())
}
