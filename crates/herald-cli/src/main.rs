//! `herald`: the command line of Herald — run the server, log, publish, tail, query, monitor,
//! bench, and a simulated facility to try it on (`serve --demo`, `demo`).

mod cmd;
mod demo;
mod json;
mod render;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

/// Herald: logs, messages and live information for a facility's control system.
#[derive(Debug, Parser)]
#[command(name = "herald", version, about, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the server (native protocol on 127.0.0.1:7400 by default).
    Serve(cmd::serve::Args),
    /// Send one log record.
    Log(cmd::log::Args),
    /// Publish one message.
    Publish(cmd::publish::Args),
    /// Send the records of a file (ACS logging XML) to the server.
    Import(cmd::import::Args),
    /// Show records as they arrive, one line each (or JSON).
    Tail(cmd::tail::Args),
    /// Show the server's clients, subscriptions, rates, queue depths and drops.
    Monitor(cmd::monitor::Args),
    /// Create or update an information object: its name, its type (to create), attribute=value.
    Set(cmd::info::SetArgs),
    /// Show an information object.
    Get(cmd::info::GetArgs),
    /// List information objects by name (regex) and type.
    Ls(cmd::info::LsArgs),
    /// Declare an information type: its name, then attributes as `name:type[:description]`.
    Declare(cmd::info::DeclareArgs),
    /// List the declared information types.
    Types(cmd::info::TypesArgs),
    /// Query the archive: samples (or buckets) of names, values at an instant, or logs.
    Query(cmd::query::Args),
    /// Set the priority threshold of running loggers whose subject matches a glob.
    Threshold(cmd::threshold::Args),
    /// Manage identities: `new` (prints a token), `ls`, `revoke`.
    Token(cmd::token::Args),
    /// Make a CA and certificates for TLS trials and tests: `dev DIR [--client NAME]`.
    Cert(cmd::cert::Args),
    /// Measure throughput against a server.
    Bench(cmd::bench::Args),
    /// Work on the archive's files with the server stopped: `migrate` (SQLite to blocks).
    Archive(cmd::archive::Args),
    /// Administer the running server: `reload` its configuration.
    Admin(cmd::admin::Args),
    /// Simulate a radio telescope (logs, storms, commands, info objects) against a server.
    Demo(cmd::demo::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => cmd::serve::run(args),
        Command::Log(args) => cmd::client_runtime(cmd::log::run(args)),
        Command::Publish(args) => cmd::client_runtime(cmd::publish::run(args)),
        Command::Import(args) => cmd::client_runtime(cmd::import::run(args)),
        Command::Tail(args) => cmd::client_runtime(cmd::tail::run(args)),
        Command::Monitor(args) => cmd::client_runtime(cmd::monitor::run(args)),
        Command::Set(args) => cmd::client_runtime(cmd::info::set(args)),
        Command::Get(args) => cmd::client_runtime(cmd::info::get(args)),
        Command::Ls(args) => cmd::client_runtime(cmd::info::ls(args)),
        Command::Declare(args) => cmd::client_runtime(cmd::info::declare(args)),
        Command::Types(args) => cmd::client_runtime(cmd::info::types(args)),
        Command::Query(args) => cmd::client_runtime(cmd::query::run(args)),
        Command::Threshold(args) => cmd::client_runtime(cmd::threshold::run(args)),
        Command::Token(args) => cmd::token::run(args),
        Command::Cert(args) => cmd::cert::run(args),
        Command::Bench(args) => cmd::bench::run(args),
        Command::Archive(args) => cmd::archive::run(args),
        Command::Admin(args) => cmd::client_runtime(cmd::admin::run(args)),
        Command::Demo(args) => cmd::client_runtime(cmd::demo::run(args)),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
