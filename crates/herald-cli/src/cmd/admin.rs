//! `herald admin reload`: the running server reads its configuration again and puts in
//! force what can change live (as SIGHUP does); the answer names what changed now and what
//! waits for a restart. Needs the `admin` permission.

use std::process::ExitCode;

use herald_client::ClientError;
use herald_proto::frame::ErrorCode;
use herald_proto::value::Field;
use herald_proto::Value;

use super::ServerArgs;
use herald_info::json::fields_json;

/// Administer the running server.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Read the configuration again (the file, with the variables and flags the server
    /// started with) and apply what can change live; an invalid one is refused whole.
    Reload(ReloadArgs),
}

#[derive(Debug, clap::Args)]
struct ReloadArgs {
    #[command(flatten)]
    server: ServerArgs,
    /// Print JSON (`applied`, `restart`, `warnings`) instead of text.
    #[arg(long)]
    json: bool,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Command::Reload(args) = args.command;
    let client = args.server.connect("herald-admin").await?;
    let data = match client.reload().await {
        Ok(data) => data,
        Err(ClientError::Server {
            code: ErrorCode::BadConfig,
            message,
        }) => {
            eprintln!("herald: {message}");
            return Ok(ExitCode::FAILURE);
        }
        Err(err) => return Err(err.into()),
    };
    if args.json {
        println!("{}", serde_json::Value::Object(fields_json(&data)));
    } else {
        print!("{}", render(&data));
    }
    Ok(ExitCode::SUCCESS)
}

fn names(data: &[Field], key: &str) -> Vec<String> {
    data.iter()
        .find(|(name, _)| name == key)
        .and_then(|(_, value)| match value {
            Value::Array(items) => Some(items.iter().map(Value::to_text).collect()),
            _ => None,
        })
        .unwrap_or_default()
}

/// Renders the answer for people.
fn render(data: &[Field]) -> String {
    let applied = names(data, "applied");
    let restart = names(data, "restart");
    let mut out = String::new();
    if applied.is_empty() {
        out.push_str("reloaded: nothing that can change live changed\n");
    } else {
        out.push_str(&format!("reloaded: in force now: {}\n", applied.join(", ")));
    }
    if !restart.is_empty() {
        out.push_str(&format!(
            "changed in the configuration but waiting for a restart: {}\n",
            restart.join(", ")
        ));
    }
    for warning in names(data, "warnings") {
        out.push_str(&format!("warning: {warning}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_what_changed_and_what_waits() {
        let list = |items: &[&str]| Value::Array(items.iter().map(|s| Value::from(*s)).collect());
        let data: Vec<Field> = vec![
            ("applied".into(), list(&["queue_records", "syslog"])),
            ("restart".into(), list(&["listen"])),
            ("warnings".into(), list(&[])),
        ];
        assert_eq!(
            render(&data),
            "reloaded: in force now: queue_records, syslog\n\
             changed in the configuration but waiting for a restart: listen\n"
        );
    }
}
