//! `herald query`: the archive, from the command line — a name's samples between two times
//! (or folded into buckets), the value of names at an instant, or log records with filters.
//! Plain lines for people, `--json` (one JSON object per line) or `--csv` for scripts.
//! Results stream page by page; on a terminal, progress goes to stderr.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use herald_info::csv::{self, Columns};
use herald_info::json::{bucket_json, record_json};
use herald_proto::archive::{BucketQuery, LogQuery, SampleQuery, StoredRecord};
use herald_proto::time::{format_iso8601, now_nanos, parse_time_spec};
use herald_proto::{PrioritySet, Record};
use serde_json::json;

use super::ServerArgs;
use crate::render;

/// Records asked for per page.
const PAGE_RECORDS: u32 = 10_000;

/// Query the archive.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Examples:\n  herald query Beam.Current --from 2026-11-20T02:00 --to 2026-11-20T03:00 --buckets 500\n  herald query --logs --priority '>=ERROR' --subject 'ANTENNA.*' --from -1h\n  herald query --at 2026-11-20T02:30 Beam.Current Beam.Energy\n\nTimes are ISO 8601 (UTC unless a zone is given) or relative: now, -1h, -30m, -2d."
)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Object names or subjects (samples, or values with --at).
    names: Vec<String>,
    /// Start (default: one hour before --to).
    #[arg(long, allow_hyphen_values = true)]
    from: Option<String>,
    /// End (default: now).
    #[arg(long, allow_hyphen_values = true)]
    to: Option<String>,
    /// Fold the samples into this many time buckets (min/max/mean/count/first/last).
    #[arg(long, conflicts_with_all = ["logs", "at"])]
    buckets: Option<u32>,
    /// With --buckets: only this numeric field.
    #[arg(long, requires = "buckets")]
    field: Option<String>,
    /// The value of each name at this instant (its last sample at or before it).
    #[arg(long, conflicts_with = "logs", allow_hyphen_values = true)]
    at: Option<String>,
    /// Query log records instead of samples.
    #[arg(long)]
    logs: bool,
    /// Logs: priorities, e.g. `>=ERROR`, `WARNING..ERROR`, `=INFO`.
    #[arg(long, requires = "logs")]
    priority: Option<String>,
    /// Logs: subject glob, e.g. `ANTENNA.*`.
    #[arg(long, requires = "logs")]
    subject: Option<String>,
    /// Logs: origin host.
    #[arg(long, requires = "logs")]
    host: Option<String>,
    /// Logs: origin process.
    #[arg(long, requires = "logs")]
    process: Option<String>,
    /// Logs: text containing this string.
    #[arg(long, requires = "logs")]
    text: Option<String>,
    /// Print one JSON object per line (as `--format json`).
    #[arg(long, conflicts_with_all = ["csv", "format"])]
    json: bool,
    /// Print CSV with a header line (as `--format csv`).
    #[arg(long, conflicts_with = "format")]
    csv: bool,
    /// How records are written: `text` (default), `json`, `csv` or `acs-xml` (a `<Log>`
    /// document of ACS log entries, which `herald import --format acs-xml` reads back).
    #[arg(long, value_enum)]
    format: Option<Output>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Output {
    /// One line per record, for people.
    Text,
    /// One JSON object per line.
    Json,
    /// CSV with a header line.
    Csv,
    /// ACS logging XML.
    AcsXml,
}

fn time(option: &str, text: &str, now: i64) -> anyhow::Result<i64> {
    parse_time_spec(text, now).with_context(|| format!("--{option}"))
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let output = match (args.format, args.json, args.csv) {
        (Some(format), ..) => format,
        (None, true, _) => Output::Json,
        (None, _, true) => Output::Csv,
        _ => Output::Text,
    };
    if output == Output::AcsXml && (args.at.is_some() || args.buckets.is_some()) {
        anyhow::bail!(
            "--format acs-xml writes log entries: it is for records, not --at or --buckets"
        );
    }
    let now = now_nanos();
    let to = args.to.as_deref().map_or(Ok(now), |t| time("to", t, now))?;
    let from = match &args.from {
        Some(text) => time("from", text, now)?,
        None => to.saturating_sub(3_600_000_000_000),
    };
    if !args.logs && args.names.is_empty() {
        anyhow::bail!("give at least one name to query, or --logs (see `herald query --help`)");
    }
    let client = args.server.connect("herald-query").await?;
    if let Some(at) = &args.at {
        let instant = time("at", at, now)?;
        let found = client.values_at(&args.names, instant).await?;
        return print_at(&args.names, &found, output);
    }
    let mut printer = Printer::new(output);
    if let Some(buckets) = args.buckets {
        for name in &args.names {
            let query = BucketQuery {
                name: name.clone(),
                from,
                to,
                buckets,
                field: args.field.clone(),
            };
            printer.buckets(name, &client.buckets(query).await?)?;
        }
        return Ok(ExitCode::SUCCESS);
    }
    if args.logs {
        let priorities = match &args.priority {
            Some(text) => text.parse().context("--priority")?,
            None => PrioritySet::ALL,
        };
        let query = LogQuery {
            from,
            to,
            priorities,
            subject: args.subject.clone(),
            host: args.host.clone(),
            process: args.process.clone(),
            text: args.text.clone(),
            after: None,
            limit: PAGE_RECORDS,
        };
        let mut pages = client.log_pages(query);
        while let Some(page) = pages.next_page().await? {
            printer.records(Columns::Logs, &page.records)?;
        }
    } else {
        for name in &args.names {
            let query = SampleQuery {
                name: name.clone(),
                from,
                to,
                after: None,
                limit: PAGE_RECORDS,
            };
            let mut pages = client.sample_pages(query);
            while let Some(page) = pages.next_page().await? {
                printer.records(Columns::Samples, &page.records)?;
            }
        }
    }
    printer.finish()?;
    Ok(ExitCode::SUCCESS)
}

fn decode(stored: &StoredRecord) -> anyhow::Result<Record> {
    stored
        .decode()
        .with_context(|| format!("archived record {} does not decode", stored.seq))
}

/// The start of an ACS logging XML answer; `</Log>` ends it.
const ACS_XML_HEAD: &str = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Log>\n";

/// Writes records as they come, with a CSV header once and progress on a terminal.
struct Printer {
    output: Output,
    header_done: bool,
    count: u64,
    progress: bool,
}

impl Printer {
    fn new(output: Output) -> Printer {
        Printer {
            output,
            header_done: false,
            count: 0,
            progress: std::io::stderr().is_terminal(),
        }
    }

    fn records(&mut self, columns: Columns, records: &[StoredRecord]) -> anyhow::Result<()> {
        let mut out = String::new();
        if self.output == Output::Csv && !std::mem::replace(&mut self.header_done, true) {
            out.push_str(csv::header(columns));
        }
        if self.output == Output::AcsXml && !std::mem::replace(&mut self.header_done, true) {
            out.push_str(ACS_XML_HEAD);
        }
        for stored in records {
            let record = decode(stored)?;
            match self.output {
                Output::Text => {
                    out.push_str(&render::record_line(&record));
                    out.push('\n');
                }
                Output::Json => {
                    out.push_str(&record_json(&record, stored.seq, stored.received).to_string());
                    out.push('\n');
                }
                Output::Csv => csv::record_lines(&mut out, columns, &record, stored.seq),
                Output::AcsXml => {
                    herald_info::acs_xml::write_entry(&record, &mut out);
                    out.push('\n');
                }
            }
        }
        self.count += records.len() as u64;
        write_out(&out)?;
        if self.progress {
            eprint!("\r{} records", self.count);
        }
        Ok(())
    }

    fn buckets(
        &mut self,
        name: &str,
        buckets: &[herald_proto::archive::Bucket],
    ) -> anyhow::Result<()> {
        let text = match self.output {
            Output::Csv => csv::buckets(buckets),
            Output::Json => buckets
                .iter()
                .map(|bucket| {
                    let mut line = bucket_json(bucket);
                    line["name"] = json!(name);
                    format!("{line}\n")
                })
                .collect(),
            // acs-xml is refused with --buckets before anything is asked.
            Output::Text | Output::AcsXml => buckets
                .iter()
                .flat_map(|b| {
                    b.fields.iter().map(move |s| {
                        format!(
                            "{} {name} {} n={} min={} max={} mean={:.6} first={} last={}\n",
                            format_iso8601(b.start),
                            s.name,
                            s.count,
                            s.min,
                            s.max,
                            s.mean,
                            s.first,
                            s.last
                        )
                    })
                })
                .collect(),
        };
        write_out(&text)
    }

    fn finish(&mut self) -> anyhow::Result<()> {
        if self.output == Output::AcsXml {
            let head = if std::mem::replace(&mut self.header_done, true) {
                ""
            } else {
                ACS_XML_HEAD
            };
            write_out(&format!("{head}</Log>\n"))?;
        }
        if self.progress {
            eprintln!("\r{} records", self.count);
        }
        Ok(())
    }
}

fn write_out(text: &str) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(text.as_bytes()) {
        // A closed pipe (`| head`) ends the output, not in an error.
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => std::process::exit(0),
        other => other.context("writing to stdout"),
    }
}

fn print_at(
    names: &[String],
    found: &[Option<StoredRecord>],
    output: Output,
) -> anyhow::Result<ExitCode> {
    let mut out = String::new();
    if output == Output::Csv {
        out.push_str(csv::header(Columns::Samples));
    }
    for (name, stored) in names.iter().zip(found) {
        let Some(stored) = stored else {
            match output {
                Output::Json => {
                    out.push_str(&format!("{}\n", json!({"name": name, "record": null})))
                }
                // acs-xml is refused with --at before anything is asked.
                Output::Text | Output::AcsXml => out.push_str(&format!(
                    "{name}: nothing archived at or before that time\n"
                )),
                Output::Csv => {}
            }
            continue;
        };
        let record = decode(stored)?;
        match output {
            Output::Text | Output::AcsXml => {
                out.push_str(&format!("{}\n", render::record_line(&record)))
            }
            Output::Json => {
                let line = json!({"name": name, "record": record_json(&record, stored.seq, stored.received)});
                out.push_str(&format!("{line}\n"));
            }
            Output::Csv => csv::record_lines(&mut out, Columns::Samples, &record, stored.seq),
        }
    }
    write_out(&out)?;
    Ok(ExitCode::SUCCESS)
}
