//! `herald publish`: publish one message and wait until the server has it.

use std::process::ExitCode;

use herald_proto::{Kind, Record};

use super::{parse_fields, ServerArgs};

/// Publish one message.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// A typed field, name=value (repeatable).
    #[arg(long = "field", short = 'f')]
    fields: Vec<String>,
    /// Priority of the message.
    #[arg(long, short, default_value = "INFO")]
    priority: String,
    /// Subject, e.g. runcontrol.cmd.
    subject: String,
    /// Message type, e.g. start.
    type_name: String,
    /// Text.
    #[arg(default_value = "")]
    text: String,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let record = Record {
        type_name: args.type_name,
        priority: args.priority.parse()?,
        text: args.text,
        fields: parse_fields(&args.fields)?,
        origin: herald_client::origin::local_origin(),
        ..Record::new(Kind::Message, args.subject)
    };
    args.server.send_one("herald-publish", &record).await?;
    Ok(ExitCode::SUCCESS)
}
