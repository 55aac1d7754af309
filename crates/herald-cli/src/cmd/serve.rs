//! `herald serve`: run the server until interrupted.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use herald_server::config::{Loaded, Source, ENV_CONFIG_FILE};
use herald_server::reload::LogLevelHook;
use herald_server::{Config, Preflight, Server};

use crate::demo::{self, DemoHandle, Simulation};

/// Run the server.
#[derive(Debug, clap::Args)]
// A flag given twice takes the last value (a script may append to a command line).
#[command(args_override_self = true)]
pub struct Args {
    /// Configuration file (TOML); `HERALD_CONFIG` names one too.
    #[arg(long, short)]
    config: Option<PathBuf>,
    /// Address for the native protocol (default 127.0.0.1:7400).
    #[arg(long)]
    listen: Option<String>,
    /// Address for HTTP: API, browser UI, WebSockets (default 127.0.0.1:7480).
    #[arg(long)]
    http: Option<String>,
    /// Server name shown to clients.
    #[arg(long)]
    name: Option<String>,
    /// Data directory (default ./herald-data).
    #[arg(long)]
    data_dir: Option<String>,
    /// Diagnostics level: error, warn, info, debug, trace.
    #[arg(long)]
    log_level: Option<String>,
    /// Serve everyone on a non-loopback address with no identities (on purpose).
    #[arg(long)]
    insecure_open: bool,
    /// The identities file (default: identities.toml in the data directory).
    #[arg(long)]
    identities: Option<String>,
    /// TLS on both ports: the server's certificate chain (PEM). Needs --tls-key.
    /// `herald cert dev DIR` makes a pair for trials.
    #[arg(long, value_name = "PEM")]
    tls_cert: Option<String>,
    /// The private key of --tls-cert (PEM).
    #[arg(long, value_name = "PEM")]
    tls_key: Option<String>,
    /// Mutual TLS: CA certificates (PEM) that sign client certificates; a client
    /// certificate's name (CN, else first DNS name) acts as the identity of that name.
    #[arg(long, value_name = "PEM")]
    tls_client_ca: Option<String>,
    /// With --tls-client-ca: `optional` (default; clients without a certificate use a
    /// token) or `required` (the handshake fails without one).
    #[arg(long, value_name = "WHEN")]
    tls_client_auth: Option<String>,
    /// Join or start a cluster of this name (`[cluster] name`, docs/cluster.md).
    #[arg(long, value_name = "NAME")]
    cluster: Option<String>,
    /// With --cluster: the route listener's address (default 127.0.0.1:7401).
    #[arg(long, value_name = "ADDR", requires = "cluster")]
    cluster_listen: Option<String>,
    /// With --cluster: a member to join through, `herald://host:port` of its route
    /// listener; repeat for more.
    #[arg(long = "route", value_name = "URL", requires = "cluster")]
    routes: Vec<String>,
    /// With --cluster: the file of the secret every member proves it knows when a route
    /// starts (the same file on every member; needed for routes beyond loopback).
    #[arg(long, value_name = "FILE", requires = "cluster")]
    cluster_secret_file: Option<String>,
    /// Validate the configuration, print it, and exit.
    #[arg(long)]
    check_config: bool,
    /// Also run a simulated radio telescope as a client of this server, to see Herald alive.
    #[arg(long)]
    demo: bool,
    /// Seed of the simulation (with --demo): the same seed gives the same run.
    #[arg(long, requires = "demo", default_value_t = crate::demo::DEFAULT_SEED)]
    demo_seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let source = source(&args);
    let Loaded { config, warnings } = source.load()?;
    if args.check_config {
        return check_config(&config, &warnings);
    }
    let log_level = init_tracing(&config.log_level);
    for warning in &warnings {
        tracing::warn!("{warning}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting runtime")?;
    let demo_seed = args.demo.then_some(args.demo_seed);
    runtime.block_on(serve(config, source, log_level, demo_seed))?;
    Ok(ExitCode::SUCCESS)
}

/// `--check-config`: says what is wrong, or prints the configuration in force. Besides the
/// settings, reads what `serve` reads before it binds: the identities, the TLS files, and
/// whether it may listen where it is told to.
fn check_config(config: &Config, warnings: &[String]) -> anyhow::Result<ExitCode> {
    for warning in warnings {
        eprintln!("warning: {warning}");
    }
    let Preflight { guard, tls, .. } = Server::preflight(config)?;
    println!("configuration OK");
    println!("{config:#?}");
    println!("archive rules, first match decides:");
    for (index, rule) in config.archive.options.rules.rules().iter().enumerate() {
        println!("  {}. {}", index + 1, rule.describe());
    }
    println!("access: {}", guard.describe());
    if let Some(tls) = tls {
        println!("tls:    {}", tls.describe());
    }
    if let Some(cluster) = &config.cluster {
        println!(
            "routes: {}",
            herald_server::cluster::describe_routes(cluster)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Returns where the configuration comes from: the file, the variables, the flags (read
/// again, with the same variables and flags, on a reload).
fn source(args: &Args) -> Source {
    let path = args
        .config
        .clone()
        .or_else(|| std::env::var_os(ENV_CONFIG_FILE).map(PathBuf::from));
    let mut flags = toml::Table::new();
    let given = [
        ("listen", &args.listen),
        ("http", &args.http),
        ("name", &args.name),
        ("log_level", &args.log_level),
        ("data_dir", &args.data_dir),
        ("identities", &args.identities),
        ("tls_cert", &args.tls_cert),
        ("tls_key", &args.tls_key),
        ("tls_client_ca", &args.tls_client_ca),
        ("tls_client_auth", &args.tls_client_auth),
    ];
    for (key, value) in given {
        if let Some(value) = value {
            flags.insert(key.to_string(), toml::Value::String(value.clone()));
        }
    }
    if let Some(name) = &args.cluster {
        let mut section = toml::Table::new();
        section.insert("name".into(), toml::Value::String(name.clone()));
        if let Some(listen) = &args.cluster_listen {
            section.insert("listen".into(), toml::Value::String(listen.clone()));
        }
        if let Some(file) = &args.cluster_secret_file {
            section.insert("secret_file".into(), toml::Value::String(file.clone()));
        }
        if !args.routes.is_empty() {
            let routes = args
                .routes
                .iter()
                .cloned()
                .map(toml::Value::String)
                .collect();
            section.insert("routes".into(), toml::Value::Array(routes));
        }
        flags.insert("cluster".to_string(), toml::Value::Table(section));
    }
    if args.insecure_open {
        flags.insert("insecure_open".to_string(), toml::Value::Boolean(true));
    }
    Source {
        path,
        env: std::env::vars().collect(),
        flags,
    }
}

/// Sets up the server's diagnostics on stderr; returns how a reload changes their level.
fn init_tracing(level: &str) -> LogLevelHook {
    use std::io::IsTerminal;
    use tracing_subscriber::filter::LevelFilter;
    use tracing_subscriber::prelude::*;
    let level: tracing::Level = level.parse().unwrap_or(tracing::Level::INFO);
    let (filter, handle) = tracing_subscriber::reload::Layer::new(LevelFilter::from_level(level));
    let ansi = std::io::stderr().is_terminal();
    let output = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_target(false)
        .with_ansi(ansi);
    tracing_subscriber::registry()
        .with(filter)
        .with(output)
        .init();
    Box::new(move |level: &str| {
        let level: tracing::Level = level
            .parse()
            .map_err(|_| format!("`{level}` is not a log level"))?;
        handle
            .reload(LevelFilter::from_level(level))
            .map_err(|err| err.to_string())
    })
}

async fn serve(
    config: Config,
    source: Source,
    log_level: LogLevelHook,
    demo_seed: Option<u64>,
) -> anyhow::Result<()> {
    let open_files = raise_open_file_limit();
    let server = Server::start(config).await?;
    server.set_config_source(source);
    server.set_log_level_hook(log_level);
    let addr = server.local_addr();
    // Tests and scripts read these two lines to learn the ports: keep them first.
    eprintln!("herald serving on {addr}");
    eprintln!("herald http on {}", server.http_addr());
    if let Some(grpc) = server.otlp_grpc_addr() {
        eprintln!("herald otlp/grpc on {grpc}");
    }
    let (udp, tcp) = server.syslog_addrs();
    if let Some(udp) = udp {
        eprintln!("herald syslog/udp on {udp}");
    }
    if let Some(tcp) = tcp {
        eprintln!("herald syslog/tcp on {tcp}");
    }
    eprintln!("  files:  {open_files}");
    eprintln!("  access: {}", server.guard().describe());
    if let Some(cluster) = server.cluster() {
        eprintln!("  cluster: {}", herald_server::cluster::describe(cluster));
        if let Some(config) = &server.config_in_force().cluster {
            let routes = herald_server::cluster::describe_routes(config);
            eprintln!("  routes: {routes}");
        }
    }
    let (scheme, http) = match server.tls() {
        Some(tls) => {
            eprintln!("  tls:    {}", tls.describe());
            eprintln!(
                "          clients add ?ca=CA.pem unless the system trusts the certificate's CA"
            );
            ("herald+tls", "https")
        }
        None => ("herald", "http"),
    };
    eprintln!("  watch:  herald tail --server {scheme}://{addr}");
    eprintln!("  info:   curl {http}://{}/info", server.http_addr());
    eprintln!("  send:   herald log --server {scheme}://{addr} --priority WARNING --subject ANTENNA.DV01 \"encoder fault\"");
    if demo_seed.is_some() && server.tls().is_some() {
        eprintln!(
            "  demo:   not started: it connects without TLS (try it on a server without TLS)"
        );
    }
    let demo = demo_seed.filter(|_| server.tls().is_none()).map(|seed| {
        let simulation = Simulation::new(seed);
        eprintln!(
            "  demo:   a simulated radio telescope is running as client `{}`:",
            demo::CLIENT_NAME
        );
        eprintln!("          {}", simulation.summary());
        DemoHandle::spawn(format!("herald://{}", reachable(addr)), seed)
    });
    eprintln!(
        "  reload: kill -HUP {} (or herald admin reload)",
        std::process::id()
    );
    eprintln!("  stop:   Ctrl-C");
    shutdown_signal().await;
    eprintln!("herald: shutting down");
    // The simulation goes first, so the server does not see its client as a failure.
    if let Some(demo) = demo {
        demo.stop().await;
    }
    server.shutdown().await;
    Ok(())
}

/// Raises the soft limit of open files to the hard limit, so connections (each a file) are
/// bounded by the server's own limits rather than a low default; says what it got.
fn raise_open_file_limit() -> String {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => {
            tracing::info!(limit, "open-file limit");
            format!("up to {limit} open (the hard limit)")
        }
        Err(err) => {
            tracing::warn!(error = %err, "could not raise the open-file limit");
            format!("could not raise the open-file limit: {err}")
        }
    }
}

/// Returns an address a local client can connect to: the loopback address of the same
/// family when the server listens on all interfaces (`0.0.0.0`, `::`).
fn reachable(addr: SocketAddr) -> SocketAddr {
    if !addr.ip().is_unspecified() {
        return addr;
    }
    let loopback: IpAddr = match addr {
        SocketAddr::V4(_) => Ipv4Addr::LOCALHOST.into(),
        SocketAddr::V6(_) => Ipv6Addr::LOCALHOST.into(),
    };
    SocketAddr::new(loopback, addr.port())
}

/// Waits for Ctrl-C or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut term =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(term) => term,
                Err(_) => return std::future::pending().await,
            };
        tokio::select! {
            _ = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = ctrl_c.await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_reaches_a_server_on_all_interfaces_through_loopback() {
        let all: SocketAddr = "0.0.0.0:7400".parse().unwrap();
        assert_eq!(reachable(all), "127.0.0.1:7400".parse().unwrap());
        let all6: SocketAddr = "[::]:7400".parse().unwrap();
        assert_eq!(reachable(all6), "[::1]:7400".parse().unwrap());
        let given: SocketAddr = "10.0.0.5:7400".parse().unwrap();
        assert_eq!(reachable(given), given);
    }
}
