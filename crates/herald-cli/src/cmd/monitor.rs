//! `herald monitor`: the server's clients, subscriptions, rates, queue depths and drops.

use std::process::ExitCode;
use std::time::Duration;

use herald_client::monitor_value;
use herald_proto::value::Field;
use herald_proto::Value;

use super::ServerArgs;
use herald_info::json::fields_json;

/// Show the server's state.
#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    server: ServerArgs,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Repeat every this many seconds until interrupted.
    #[arg(long)]
    watch: Option<f64>,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let client = args.server.connect("herald-monitor").await?;
    loop {
        let data = client.monitor().await?;
        if args.json {
            println!("{}", serde_json::Value::Object(fields_json(&data)));
        } else {
            print!("{}", render(&data));
        }
        let Some(seconds) = args.watch else { break };
        tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
    }
    Ok(ExitCode::SUCCESS)
}

fn int(data: &[Field], name: &str) -> i64 {
    match monitor_value(data, name) {
        Some(Value::Int(n)) => *n,
        _ => 0,
    }
}

fn float(data: &[Field], name: &str) -> f64 {
    match monitor_value(data, name) {
        Some(Value::Float(n)) => *n,
        _ => 0.0,
    }
}

fn text<'a>(data: &'a [Field], name: &str) -> &'a str {
    match monitor_value(data, name) {
        Some(Value::Str(text)) => text,
        _ => "",
    }
}

/// Renders the non-zero counts of a map (`closes`, `drops`) as one line, if any.
fn nonzero_line(label: &str, map: Option<&Value>) -> Option<String> {
    let Some(Value::Map(counts)) = map else {
        return None;
    };
    let nonzero: Vec<String> = counts
        .iter()
        .filter(|(_, v)| !matches!(v, Value::Int(0)))
        .map(|(k, v)| format!("{k} {}", v.to_text()))
        .collect();
    (!nonzero.is_empty()).then(|| format!("{label}: {}\n", nonzero.join(", ")))
}

/// Renders the cluster: this member, the members known, and each route.
fn render_cluster(cluster: &[Field], out: &mut String) {
    let members = match monitor_value(cluster, "members") {
        Some(Value::Array(members)) => members.len(),
        _ => 0,
    };
    let flag = |name: &str| matches!(monitor_value(cluster, name), Some(Value::Bool(true)));
    let guarded = match (flag("secret"), flag("tls")) {
        (true, true) => "authenticated by the cluster secret, over TLS",
        (true, false) => "authenticated by the cluster secret",
        (false, true) => "not authenticated, over TLS",
        (false, false) => "not authenticated",
    };
    out.push_str(&format!(
        "cluster {}: {} other members known, {} local interests announced; routes {guarded}
",
        text(cluster, "name"),
        members,
        int(cluster, "interests"),
    ));
    let Some(Value::Array(routes)) = monitor_value(cluster, "routes") else {
        return;
    };
    for route in routes {
        let Value::Map(r) = route else { continue };
        let rtt = match int(r, "rtt_us") {
            0 => "-".to_string(),
            micros => format!("{:.2} ms", micros as f64 / 1000.0),
        };
        out.push_str(&format!(
            "  route {} {:<4} {:<21} in {:<10} ({:.0}/s) out {:<10} ({:.0}/s) queue {:<8} dropped {:<8} rtt {:<9} far interests {}\n",
            text(r, "member"),
            text(r, "direction"),
            text(r, "address"),
            int(r, "records_in"),
            float(r, "rate_in"),
            int(r, "records_out"),
            float(r, "rate_out"),
            int(r, "queue"),
            int(r, "dropped"),
            rtt,
            int(r, "interests"),
        ));
    }
    if let Some(Value::Array(namespaces)) = monitor_value(cluster, "namespaces") {
        for namespace in namespaces {
            let Value::Map(n) = namespace else { continue };
            let owner = match text(n, "owner") {
                "" => "none now",
                owner => owner,
            };
            let how = if matches!(monitor_value(n, "leased"), Some(Value::Bool(true))) {
                "lease"
            } else {
                "static"
            };
            out.push_str(&format!(
                "  namespace {} owner {owner} ({how})\n",
                text(n, "name")
            ));
        }
    }
}

/// Renders the mirrors this server feeds (with their lag) and the sources feeding it.
fn render_mirrors(data: &[Field], out: &mut String) {
    if let Some(Value::Array(mirrors)) = monitor_value(data, "mirrors") {
        for mirror in mirrors {
            let Value::Map(m) = mirror else { continue };
            let state = match monitor_value(m, "up") {
                Some(Value::Bool(true)) => "up",
                _ => "down",
            };
            let tls = match monitor_value(m, "tls") {
                Some(Value::Bool(true)) => " (TLS)",
                _ => "",
            };
            out.push_str(&format!(
                "mirror to {}{tls} {state}: sent {}, waiting {} (lag {} ms), dropped {}, rtt {:.2} ms\n",
                text(m, "to"),
                int(m, "records_out"),
                int(m, "queue"),
                int(m, "lag_ms"),
                int(m, "dropped"),
                int(m, "rtt_us") as f64 / 1000.0,
            ));
        }
    }
    if let Some(Value::Array(feeds)) = monitor_value(data, "mirrored") {
        for feed in feeds {
            let Value::Map(f) = feed else { continue };
            let list = |key: &str| match monitor_value(f, key) {
                Some(Value::Array(globs)) => globs
                    .iter()
                    .map(|g| g.to_text())
                    .collect::<Vec<_>>()
                    .join(" "),
                _ => String::new(),
            };
            out.push_str(&format!(
                "read-only mirror of {}: subjects {}; objects {}\n",
                text(f, "source"),
                list("subjects"),
                list("objects"),
            ));
        }
    }
}

/// Renders monitor data for people.
pub fn render(data: &[Field]) -> String {
    let mut out = format!(
        "server {} {} up {}s\nconnections {} (total {})  subscriptions {}\nrecords in {} ({:.0}/s)  deliveries {} ({:.0}/s out)  dropped {}  rejected frames {}\n",
        text(data, "server"),
        text(data, "version"),
        int(data, "uptime_ms") / 1000,
        int(data, "connections"),
        int(data, "connections_total"),
        int(data, "subscriptions"),
        int(data, "records_in"),
        float(data, "rate_in"),
        int(data, "deliveries"),
        float(data, "rate_out"),
        int(data, "dropped"),
        int(data, "rejected_frames"),
    );
    for name in ["closes", "drops"] {
        if let Some(line) = nonzero_line(name, monitor_value(data, name)) {
            out.push_str(&line);
        }
    }
    let (requests, records) = (int(data, "refused_requests"), int(data, "refused_records"));
    if requests + records > 0 {
        out.push_str(&format!(
            "refused: {requests} requests answered alone, {records} records of PUBLISH batches\n"
        ));
    }
    if let Some(Value::Map(http)) = monitor_value(data, "http") {
        out.push_str(&format!(
            "http: {} connections  refused over a limit {}  closed without a request in time {}\n",
            int(http, "connections"),
            int(http, "refused"),
            int(http, "header_timeouts"),
        ));
    }
    if let Some(Value::Map(archive)) = monitor_value(data, "archive") {
        out.push_str(&format!(
            "archive: {}  written {}  backlog {} ({} bytes, {} spilled to disk)  dropped {}  write errors {}  days expired {}  unreadable skipped {}\n",
            text(archive, "backend"),
            int(archive, "written"),
            int(archive, "backlog"),
            int(archive, "backlog_bytes"),
            int(archive, "spill_bytes"),
            int(archive, "dropped"),
            int(archive, "write_errors"),
            int(archive, "days_expired"),
            int(archive, "skipped_unreadable"),
        ));
        if let Some(Value::Str(error)) = monitor_value(archive, "last_error") {
            out.push_str(&format!("archive last error: {error}\n"));
        }
        if let Some(Value::Bool(true)) = monitor_value(archive, "unclean_start") {
            out.push_str(&format!(
                "archive: started after an unclean stop; {} files cut back ({} bytes of half-written blocks)\n",
                int(archive, "repaired_files"),
                int(archive, "repaired_bytes"),
            ));
        }
    }
    if let Some(Value::Map(cluster)) = monitor_value(data, "cluster") {
        render_cluster(cluster, &mut out);
    }
    render_mirrors(data, &mut out);
    if let Some(Value::Map(syslog)) = monitor_value(data, "syslog") {
        let listening: Vec<String> = ["udp", "tcp"]
            .iter()
            .filter(|door| !text(syslog, door).is_empty())
            .map(|door| format!("{door} {}", text(syslog, door)))
            .collect();
        out.push_str(&format!(
            "syslog: {}  records {}  bad {}  connections {}\n",
            listening.join(", "),
            int(syslog, "records"),
            int(syslog, "bad"),
            int(syslog, "connections"),
        ));
        if let Some(Value::Map(last)) = monitor_value(syslog, "last_bad") {
            out.push_str(&format!(
                "syslog last bad: from {}: {} ({:?})\n",
                text(last, "peer"),
                text(last, "error"),
                text(last, "sample"),
            ));
        }
    }
    let Some(Value::Array(clients)) = monitor_value(data, "clients") else {
        return out;
    };
    out.push_str(&format!(
        "{:<5} {:<20} {:<22} {:>10}\n",
        "id", "client", "peer", "records in"
    ));
    for client in clients {
        let Value::Map(client) = client else { continue };
        out.push_str(&format!(
            "{:<5} {:<20} {:<22} {:>10}\n",
            int(client, "id"),
            text(client, "name"),
            text(client, "peer"),
            int(client, "records_in")
        ));
        let Some(Value::Array(subscriptions)) = monitor_value(client, "subscriptions") else {
            continue;
        };
        for subscription in subscriptions {
            let Value::Map(s) = subscription else {
                continue;
            };
            out.push_str(&format!(
                "      sub {:<4} depth {:<8} delivered {:<10} dropped {:<8} {}\n",
                int(s, "id"),
                int(s, "depth"),
                int(s, "delivered"),
                int(s, "dropped"),
                text(s, "filter")
            ));
            if let Some(line) = nonzero_line("        drops", monitor_value(s, "drops")) {
                out.push_str(&line);
            }
        }
    }
    out
}
