//! `herald cert dev DIR`: a CA and certificates for trials and tests of TLS and mutual
//! TLS, made by [`herald_server::tls::dev`]; existing files are kept.

use std::path::PathBuf;
use std::process::ExitCode;

use herald_server::tls::dev::{self, files, Made};
use serde_json::json;

/// Make certificates.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, clap::Subcommand)]
enum Command {
    /// Make a CA, a server certificate and client certificates in DIR (for trials and
    /// tests; existing files are kept).
    Dev(DevArgs),
}

#[derive(Debug, clap::Args)]
struct DevArgs {
    /// Directory for the files (made if missing).
    dir: PathBuf,
    /// Another name the server is reached by (a host name or an IP address); repeat.
    #[arg(long = "name", value_name = "HOST")]
    names: Vec<String>,
    /// Make a client certificate whose name is this identity; repeat.
    #[arg(long = "client", value_name = "IDENTITY")]
    clients: Vec<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match args.command {
        Command::Dev(args) => {
            let made = dev::make(&args.dir, &args.names, &args.clients)?;
            report(&args, &made);
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn report(args: &DevArgs, done: &Made) {
    let (names, made, kept) = (&done.server_names, &done.made, &done.kept);
    let dir = args.dir.display();
    if args.json {
        let paths = |paths: &[PathBuf]| -> Vec<String> {
            paths.iter().map(|p| p.display().to_string()).collect()
        };
        let out = json!({
            "dir": dir.to_string(),
            "made": paths(made),
            "kept": paths(kept),
            "server_names": names,
            "ca": args.dir.join(files::CA).display().to_string(),
            "tls_cert": args.dir.join(files::SERVER).display().to_string(),
            "tls_key": args.dir.join(files::SERVER_KEY).display().to_string(),
        });
        println!("{out}");
        return;
    }
    for path in made {
        println!("made  {}", path.display());
    }
    for path in kept {
        println!("kept  {} (already there)", path.display());
    }
    println!("the server certificate is valid for: {}", names.join(", "));
    println!("serve with TLS:");
    println!("  herald serve --tls-cert {dir}/server.pem --tls-key {dir}/server-key.pem");
    println!("  (and --tls-client-ca {dir}/ca.pem to accept the client certificates)");
    println!("connect:");
    println!("  herald tail --server 'herald+tls://localhost:7400?ca={dir}/ca.pem'");
    for client in &args.clients {
        println!(
            "  herald tail --server 'herald+tls://localhost:7400?ca={dir}/ca.pem&cert={dir}/client-{client}.pem&key={dir}/client-{client}-key.pem'"
        );
    }
    println!(
        "these are for trials and tests: a facility's own CA should sign a production server's"
    );
}
