//! `herald import`: records from a file into Herald — ACS logging XML (ACS's log entry
//! elements and attributes). The whole file is read first: a file that does not parse is
//! refused with the line and column of the first problem, and nothing is sent.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use super::ServerArgs;

/// How long the server may take to acknowledge what was sent.
const FLUSH_TIMEOUT: Duration = Duration::from_secs(60);

/// Import records from a file.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// The file's format.
    #[arg(long, value_enum)]
    format: ImportFormat,
    /// The file (`-`: standard input).
    file: PathBuf,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum ImportFormat {
    /// ACS logging XML: `<Info TimeStamp="…" …>text</Info>` entries, bare or in `<Log>`.
    AcsXml,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let name = args.file.display().to_string();
    let text = if name == "-" {
        std::io::read_to_string(std::io::stdin()).context("reading standard input")?
    } else {
        std::fs::read_to_string(&args.file).with_context(|| format!("reading {name}"))?
    };
    let records = match args.format {
        ImportFormat::AcsXml => herald_info::acs_xml::parse(&text)
            .map_err(|err| anyhow::anyhow!("{name}: {err}; nothing was imported"))?,
    };
    let client = args.server.connect("herald-import").await?;
    let progress = std::io::stderr().is_terminal();
    for (i, record) in records.iter().enumerate() {
        client.publish(record).await.with_context(|| {
            format!(
                "sending the record of {name} at {} ({i} of {} sent before it)",
                herald_proto::time::format_iso8601(record.time),
                records.len()
            )
        })?;
        if progress && i % 10_000 == 0 {
            eprint!("\r{i} of {} records sent", records.len());
        }
    }
    client
        .flush(FLUSH_TIMEOUT)
        .await
        .context("waiting for the server to take the records")?;
    client.close(FLUSH_TIMEOUT).await?;
    if progress {
        eprint!("\r");
    }
    println!("imported {} records from {name}", records.len());
    Ok(ExitCode::SUCCESS)
}
