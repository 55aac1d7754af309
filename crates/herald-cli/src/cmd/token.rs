//! `herald token new|ls|revoke`: the identities a server admits. Works on the identities
//! file directly (a running server reads it again within a second, and closes the
//! connections of a revoked identity).

use std::path::PathBuf;
use std::process::ExitCode;

use herald_server::auth::store::{self, Entry};
use serde_json::json;

/// Manage identities: tokens and their permissions.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Make an identity and print its token (shown this once; only a hash is kept).
    New(NewArgs),
    /// List the identities and their permissions.
    Ls(Where),
    /// Remove an identity: its token stops working, its connections are closed.
    Revoke(RevokeArgs),
}

/// Where the identities are: found as `herald serve` finds them, from the same
/// configuration file, `HERALD_*` variables and flags.
#[derive(Debug, clap::Args)]
struct Where {
    /// The server's configuration file (TOML); `HERALD_CONFIG` names one too.
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// The identities file (default: identities.toml in the data directory).
    #[arg(long)]
    identities: Option<String>,
    /// The server's data directory (default ./herald-data).
    #[arg(long)]
    data_dir: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

impl Where {
    fn path(&self) -> anyhow::Result<PathBuf> {
        let config = super::server_config(
            self.config.as_deref(),
            &[
                ("identities", &self.identities),
                ("data_dir", &self.data_dir),
            ],
        )?;
        Ok(config.security.identities_path(&config.data_dir))
    }
}

#[derive(Debug, clap::Args)]
struct NewArgs {
    /// Its name: letters, digits, `-`, `_`, `.`, `@`.
    name: String,
    /// Subjects it may publish about (glob; repeat for more).
    #[arg(long, value_name = "GLOB")]
    publish: Vec<String>,
    /// Subjects it may not publish about, even where --publish allows.
    #[arg(long, value_name = "GLOB")]
    deny_publish: Vec<String>,
    /// Subjects it may receive (a wider subscription is narrowed to these).
    #[arg(long, value_name = "GLOB")]
    subscribe: Vec<String>,
    /// Subjects it may not receive.
    #[arg(long, value_name = "GLOB")]
    deny_subscribe: Vec<String>,
    /// Information objects it may read (name glob).
    #[arg(long, value_name = "GLOB")]
    info_read: Vec<String>,
    /// Information objects it may not read.
    #[arg(long, value_name = "GLOB")]
    deny_info_read: Vec<String>,
    /// Information objects it may create, change and delete (name glob).
    #[arg(long, value_name = "GLOB")]
    info_write: Vec<String>,
    /// Information objects it may not write.
    #[arg(long, value_name = "GLOB")]
    deny_info_write: Vec<String>,
    /// It may query the archive.
    #[arg(long)]
    query: bool,
    /// It may administer: control messages (thresholds), the monitor's connection details.
    #[arg(long)]
    admin: bool,
    #[command(flatten)]
    place: Where,
}

#[derive(Debug, clap::Args)]
struct RevokeArgs {
    /// The identity to remove.
    name: String,
    #[command(flatten)]
    place: Where,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::New(new) => create(new),
        Command::Ls(place) => list(&place),
        Command::Revoke(revoke) => {
            let path = revoke.place.path()?;
            store::revoke(&path, &revoke.name)?;
            if store::list(&path)?.is_empty() && !revoke.place.json {
                eprintln!(
                    "that was the last identity: a running server that started with identities \
                     now admits no one until one is added"
                );
            }
            if revoke.place.json {
                println!("{}", json!({"revoked": revoke.name, "file": path}));
            } else {
                println!(
                    "revoked `{}` in {}; a running server closes its connections within a second",
                    revoke.name,
                    path.display()
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn create(new: NewArgs) -> anyhow::Result<ExitCode> {
    let path = new.place.path()?;
    let entry = Entry {
        name: new.name.clone(),
        publish: new.publish,
        deny_publish: new.deny_publish,
        subscribe: new.subscribe,
        deny_subscribe: new.deny_subscribe,
        info_read: new.info_read,
        deny_info_read: new.deny_info_read,
        info_write: new.info_write,
        deny_info_write: new.deny_info_write,
        query: new.query,
        admin: new.admin,
        ..Entry::default()
    };
    let secret = store::add(&path, entry)?;
    if new.place.json {
        println!(
            "{}",
            json!({"name": new.name, "token": secret, "file": path})
        );
    } else {
        eprintln!(
            "identity `{}` added to {}; its token (shown this once, keep it secret):",
            new.name,
            path.display()
        );
        println!("{secret}");
        eprintln!("connect with herald://HOST:7400?token=<token>, or `Authorization: Bearer <token>` over HTTP");
    }
    Ok(ExitCode::SUCCESS)
}

fn list(place: &Where) -> anyhow::Result<ExitCode> {
    let path = place.path()?;
    let entries = store::list(&path)?;
    if place.json {
        let entries: Vec<serde_json::Value> = entries.iter().map(entry_json).collect();
        println!("{}", serde_json::Value::Array(entries));
        return Ok(ExitCode::SUCCESS);
    }
    if entries.is_empty() {
        println!(
            "no identities in {}: a server on loopback serves everyone",
            path.display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    for entry in &entries {
        let permissions = entry.permissions().map_err(anyhow::Error::msg)?;
        println!("{}  (made {})", entry.name, entry.created);
        println!("  publish:    {}", permissions.publish.describe());
        println!("  subscribe:  {}", permissions.subscribe.describe());
        println!("  info-read:  {}", permissions.info_read.describe());
        println!("  info-write: {}", permissions.info_write.describe());
        let yes = |b: bool| if b { "yes" } else { "no" };
        println!(
            "  query:      {}\n  admin:      {}",
            yes(entry.query),
            yes(entry.admin)
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn entry_json(entry: &Entry) -> serde_json::Value {
    json!({
        "name": entry.name,
        "created": entry.created,
        "publish": entry.publish,
        "deny_publish": entry.deny_publish,
        "subscribe": entry.subscribe,
        "deny_subscribe": entry.deny_subscribe,
        "info_read": entry.info_read,
        "deny_info_read": entry.deny_info_read,
        "info_write": entry.info_write,
        "deny_info_write": entry.deny_info_write,
        "query": entry.query,
        "admin": entry.admin,
    })
}
