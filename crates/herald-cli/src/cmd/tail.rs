//! `herald tail`: a live view of the records that pass a filter.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use herald_client::Event;
use herald_proto::Filter;

use super::ServerArgs;
use crate::{json, render};

/// Show records as they arrive.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Subject glob (`*` any run, `?` one character).
    #[arg(long, short, default_value = "*")]
    subject: String,
    /// Type glob.
    #[arg(long = "type", short = 't', default_value = "*")]
    type_name: String,
    /// Priority set: `>=WARNING`, `=DEBUG`, `INFO..ERROR`, `DEBUG,>=ERROR`, `*`.
    #[arg(long, short, default_value = "*")]
    priority: String,
    /// Audience this viewer belongs to (repeatable); records for other audiences are hidden.
    #[arg(long, short)]
    audience: Vec<String>,
    /// Kinds: log, message, info (comma-separated) or `*`.
    #[arg(long, short, default_value = "*")]
    kind: String,
    /// One JSON object per line instead of text.
    #[arg(long)]
    json: bool,
    /// Stop after this many records.
    #[arg(long, short = 'n')]
    count: Option<u64>,
    /// Stop after this many seconds without a record.
    #[arg(long)]
    idle_timeout: Option<f64>,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let filter = Filter::parse(
        Some(&args.subject),
        Some(&args.type_name),
        Some(&args.priority),
        &args.audience,
        Some(&args.kind),
    )?;
    let client = args.server.connect("herald-tail").await?;
    let mut subscription = client.subscribe(filter).await?;
    let stdout = std::io::stdout();
    let mut shown = 0;
    while args.count.is_none_or(|count| shown < count) {
        let event = match args.idle_timeout {
            Some(seconds) => {
                match tokio::time::timeout(Duration::from_secs_f64(seconds), subscription.next())
                    .await
                {
                    Ok(event) => event,
                    Err(_) => break,
                }
            }
            None => subscription.next().await,
        };
        let Some(event) = event else {
            let why = client
                .error()
                .map_or_else(|| "connection closed".to_string(), |e| e.to_string());
            anyhow::bail!("{why}");
        };
        let text = match (&event, args.json) {
            (Event::Record(delivered), false) => render::line(delivered),
            (Event::Record(delivered), true) => json::delivered(delivered).to_string(),
            (Event::Gap(gap), false) => render::gap(gap),
            (Event::Gap(gap), true) => json::gap(gap).to_string(),
        };
        if matches!(event, Event::Record(_)) {
            shown += 1;
        }
        let mut out = stdout.lock();
        if writeln!(out, "{text}").and_then(|()| out.flush()).is_err() {
            break; // The reader went away (e.g. `| head`).
        }
    }
    Ok(ExitCode::SUCCESS)
}
