//! `herald log`: send one log record and wait until the server has it.

use std::process::ExitCode;

use herald_proto::{Kind, Priority, Record};

use super::{parse_fields, ServerArgs};

/// Send one log record.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Priority: TRACE, DELOUSE, DEBUG, INFO, NOTICE, WARNING, ERROR, CRITICAL, ALERT, EMERGENCY.
    #[arg(long, short, default_value = "INFO")]
    priority: String,
    /// What the record is about, e.g. ANTENNA.DV01.Mount.
    #[arg(long, short)]
    subject: String,
    /// Log type.
    #[arg(long = "type", short = 't', default_value = "")]
    type_name: String,
    /// Audience (repeatable): operator, developer, science, …
    #[arg(long, short)]
    audience: Vec<String>,
    /// A typed field, name=value (repeatable).
    #[arg(long = "field", short = 'f')]
    fields: Vec<String>,
    /// The text.
    text: String,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let priority: Priority = args.priority.parse()?;
    let record = Record {
        priority,
        type_name: args.type_name,
        audience: args.audience,
        origin: herald_client::origin::local_origin(),
        text: args.text,
        fields: parse_fields(&args.fields)?,
        ..Record::new(Kind::Log, args.subject)
    };
    args.server.send_one("herald-log", &record).await?;
    Ok(ExitCode::SUCCESS)
}
