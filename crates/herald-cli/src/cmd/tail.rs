//! `herald tail`: a live view of the records that pass a filter.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use herald_client::Event;
use herald_proto::{DeliveryOptions, Filter};

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
    /// One JSON object per line instead of text (as `--format json`).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// How records are written: `text` (default), `json` (one object per line) or
    /// `acs-xml` (one ACS log entry per line; gaps as XML comments).
    #[arg(long, value_enum)]
    format: Option<TailFormat>,
    /// Stop after this many records.
    #[arg(long, short = 'n')]
    count: Option<u64>,
    /// Stop after this many seconds without a record.
    #[arg(long)]
    idle_timeout: Option<f64>,
    /// What the server does when this viewer falls behind: drop-new, drop-old, block,
    /// disconnect. Losses show as gap lines either way.
    #[arg(long, default_value = "drop-new")]
    policy: String,
    /// Latest-only: per subject show only the newest record, at most this many per second.
    #[arg(long, value_name = "PER_SECOND")]
    latest: Option<f64>,
    /// Bound of this viewer's queue on the server, in records.
    #[arg(long)]
    queue_records: Option<u64>,
    /// Join queue group NAME: each matching record goes to one member of the group (the
    /// one with the shortest queue), so several `tail --group` share the records.
    #[arg(long, value_name = "NAME", conflicts_with = "info")]
    group: Option<String>,
    /// Watch information objects whose name matches this regular expression instead of
    /// records: their current values first, then every change.
    #[arg(long, value_name = "REGEX")]
    info: Option<String>,
    /// With `--info`: a type selection, `T`, `T+` (and subtypes), `!T`, `!T+`.
    #[arg(long, value_name = "SELECTION", requires = "info")]
    info_type: Option<String>,
}

/// How `tail` writes what it sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum TailFormat {
    /// One line per record, for people.
    Text,
    /// One JSON object per line.
    Json,
    /// One ACS log entry per line.
    AcsXml,
}

/// Returns `text` as an XML comment (a `--` inside would end it early).
fn xml_comment(text: &str) -> String {
    format!("<!-- {} -->", text.replace("--", "- -"))
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let format = match (args.format, args.json) {
        (Some(format), _) => format,
        (None, true) => TailFormat::Json,
        (None, false) => TailFormat::Text,
    };
    let filter = Filter::parse(
        Some(&args.subject),
        Some(&args.type_name),
        Some(&args.priority),
        &args.audience,
        Some(&args.kind),
    )?;
    if let Some(rate) = args.latest {
        anyhow::ensure!(
            rate > 0.0 && rate <= herald_proto::delivery_options::MAX_LATEST_PER_SECOND,
            "bad --latest `{rate}` (expected a rate in (0, 10000] records per second per subject)"
        );
    }
    if let Some(group) = &args.group {
        herald_proto::delivery_options::check_group(group)
            .map_err(|why| anyhow::anyhow!("bad --group: {why}"))?;
    }
    let options = DeliveryOptions {
        group: args.group.as_deref().map(std::sync::Arc::from),
        policy: args.policy.parse()?,
        latest_per_second: args.latest,
        max_records: args.queue_records,
        ..DeliveryOptions::default()
    };
    let client = args.server.connect("herald-tail").await?;
    let mut subscription = match &args.info {
        Some(regex) => {
            let selection = herald_proto::info::SelectionData {
                name_regex: Some(regex.clone()),
                types: args.info_type.clone(),
                any: false,
            };
            client.subscribe_info(selection).await?
        }
        None => client.subscribe_with_options(filter, options).await?,
    };
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
        let text = match (&event, format) {
            (Event::Record(delivered), TailFormat::Text) if args.info.is_some() => {
                render::info_line(delivered)
            }
            (Event::Record(delivered), TailFormat::Text) => render::line(delivered),
            (Event::Record(delivered), TailFormat::Json) => json::delivered(delivered).to_string(),
            (Event::Record(delivered), TailFormat::AcsXml) => {
                let mut entry = String::new();
                herald_info::acs_xml::write_entry(delivered.record(), &mut entry);
                entry
            }
            (Event::Gap(gap), TailFormat::Text) => render::gap(gap),
            (Event::Gap(gap), TailFormat::Json) => json::gap(gap).to_string(),
            (Event::Gap(gap), TailFormat::AcsXml) => xml_comment(&render::gap(gap)),
            (Event::Interrupted(notice), TailFormat::Text) => render::interrupted(notice),
            (Event::Interrupted(notice), TailFormat::Json) => json::interrupted(notice).to_string(),
            (Event::Interrupted(notice), TailFormat::AcsXml) => {
                xml_comment(&render::interrupted(notice))
            }
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
