//! `GET /metrics`: the monitor's numbers in Prometheus's text exposition format (0.0.4),
//! for a scraper: server counters, drops by reason, connection closes, every subscription's
//! queue and drops, the cluster's routes, the archive (written, backlog, drops by priority),
//! the information store and the syslog listeners. Made from the same snapshot as
//! `GET /monitor`, so the two never disagree. Needs the `admin` permission, as `/monitor`.

use std::fmt::Write;
use std::sync::Arc;

use axum::extract::State;
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::response::IntoResponse;
use herald_proto::value::{Field, Value};

use crate::shared::Shared;

/// The exposition format's media type.
const CONTENT: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `GET /metrics`.
pub async fn get(State(shared): State<Arc<Shared>>) -> impl IntoResponse {
    let data = crate::snapshot::monitor_snapshot(&shared);
    let objects = shared.info.read(|store| store.len());
    (
        [(CONTENT_TYPE, CONTENT), (CACHE_CONTROL, "no-cache")],
        exposition(&data, objects),
    )
}

/// One metric family being written: its samples follow its `# HELP` and `# TYPE`.
struct Family<'a> {
    out: &'a mut String,
    name: &'static str,
}

impl Family<'_> {
    fn sample(&mut self, labels: &[(&str, &str)], value: f64) {
        self.out.push_str(self.name);
        if !labels.is_empty() {
            self.out.push('{');
            for (i, (name, label)) in labels.iter().enumerate() {
                if i > 0 {
                    self.out.push(',');
                }
                let _ = write!(self.out, "{name}=\"{}\"", escape(label));
            }
            self.out.push('}');
        }
        let _ = writeln!(self.out, " {}", number(value));
    }
}

/// Writes families into one text.
struct Exposition {
    out: String,
}

impl Exposition {
    fn family(&mut self, name: &'static str, kind: &str, help: &str) -> Family<'_> {
        let _ = writeln!(self.out, "# HELP {name} {help}");
        let _ = writeln!(self.out, "# TYPE {name} {kind}");
        Family {
            out: &mut self.out,
            name,
        }
    }

    /// One sample without labels.
    fn single(&mut self, name: &'static str, kind: &str, help: &str, value: f64) {
        self.family(name, kind, help).sample(&[], value);
    }

    /// A family with one sample per entry of `map` (a monitor map of counts), labelled
    /// `label` = the entry's name.
    fn by(
        &mut self,
        name: &'static str,
        help: &str,
        label: &str,
        map: &[Field],
        extra: &[(&str, &str)],
    ) {
        let mut family = self.family(name, "counter", help);
        for (key, value) in map {
            let mut labels = extra.to_vec();
            labels.push((label, key));
            family.sample(&labels, float(value));
        }
    }
}

/// Returns the text for the monitor's `data`, with `objects` information objects.
pub fn exposition(data: &[Field], objects: usize) -> String {
    let mut e = Exposition {
        out: String::with_capacity(8 * 1024),
    };
    let server = text(data, "server");
    let version = text(data, "version");
    e.family(
        "herald_build_info",
        "gauge",
        "The server's name and version (always 1).",
    )
    .sample(&[("server", server), ("version", version)], 1.0);
    e.single(
        "herald_uptime_seconds",
        "gauge",
        "Seconds since the server started.",
        num(data, "uptime_ms") / 1e3,
    );
    e.single(
        "herald_connections",
        "gauge",
        "Native-protocol connections open.",
        num(data, "connections"),
    );
    e.single(
        "herald_connections_opened_total",
        "counter",
        "Native-protocol connections accepted.",
        num(data, "connections_total"),
    );
    e.single(
        "herald_subscriptions",
        "gauge",
        "Subscriptions open.",
        num(data, "subscriptions"),
    );
    e.single(
        "herald_records_received_total",
        "counter",
        "Records taken from producers (every front door).",
        num(data, "records_in"),
    );
    e.single(
        "herald_received_bytes_total",
        "counter",
        "Bytes of the records taken.",
        num(data, "bytes_in"),
    );
    e.single(
        "herald_deliveries_total",
        "counter",
        "Records queued for subscribers.",
        num(data, "deliveries"),
    );
    e.single(
        "herald_duplicate_records_total",
        "counter",
        "Records dropped because this server had them already (resent after a failover).",
        num(data, "duplicates"),
    );
    e.single(
        "herald_rejected_frames_total",
        "counter",
        "Frames that closed their connection.",
        num(data, "rejected_frames"),
    );
    e.single(
        "herald_refused_requests_total",
        "counter",
        "Requests answered with an error alone.",
        num(data, "refused_requests"),
    );
    e.single(
        "herald_refused_records_total",
        "counter",
        "Records refused from publish batches (bad input).",
        num(data, "refused_records"),
    );
    e.single(
        "herald_denied_total",
        "counter",
        "Requests and batches refused by permission.",
        num(data, "denied"),
    );
    e.by("herald_dropped_records_total", "Records lost, by reason: subscribers' queues, the archive (reason archive), refused over a source quota (reason quota); superseded is asked for by latest-only subscribers.", "reason", map(data, "drops"), &[]);
    e.by(
        "herald_connection_closes_total",
        "Connections closed, by reason.",
        "reason",
        map(data, "closes"),
        &[],
    );
    let queues = map(data, "queues");
    e.single(
        "herald_queue_bytes",
        "gauge",
        "Bytes all subscriber queues hold together.",
        num(queues, "bytes"),
    );
    e.single(
        "herald_queue_budget_bytes",
        "gauge",
        "Bytes all subscriber queues may hold together (queue_budget_bytes).",
        num(queues, "budget_bytes"),
    );
    let http = map(data, "http");
    e.single(
        "herald_http_connections",
        "gauge",
        "HTTP connections open.",
        num(http, "connections"),
    );
    e.single(
        "herald_http_refused_total",
        "counter",
        "HTTP connections refused over a limit.",
        num(http, "refused"),
    );
    e.single(
        "herald_http_header_timeouts_total",
        "counter",
        "HTTP connections closed without a request in time.",
        num(http, "header_timeouts"),
    );
    e.single(
        "herald_info_objects",
        "gauge",
        "Information objects held.",
        objects as f64,
    );
    subscriptions(&mut e, data);
    routes(&mut e, data);
    archive(&mut e, map(data, "archive"));
    syslog(&mut e, map(data, "syslog"));
    let otlp = map(data, "otlp");
    if !otlp.is_empty() {
        e.single(
            "herald_otlp_requests_total",
            "counter",
            "OTLP export requests answered (POST /v1/logs and gRPC LogsService/Export).",
            num(otlp, "requests"),
        );
        e.single(
            "herald_otlp_grpc_requests_total",
            "counter",
            "OTLP export requests answered over gRPC.",
            num(otlp, "grpc_requests"),
        );
        e.single(
            "herald_otlp_records_total",
            "counter",
            "OpenTelemetry log records taken.",
            num(otlp, "records"),
        );
        e.single(
            "herald_otlp_rejected_records_total",
            "counter",
            "OpenTelemetry log records rejected (partial success).",
            num(otlp, "rejected"),
        );
    }
    e.out
}

/// Every subscription's queue and drops, labelled by connection, client and subscription.
fn subscriptions(e: &mut Exposition, data: &[Field]) {
    let mut rows = Vec::new();
    for client in array(data, "clients") {
        let Value::Map(client) = client else { continue };
        let connection = number(num(client, "id"));
        let name = text(client, "name").to_string();
        for subscription in array(client, "subscriptions") {
            let Value::Map(subscription) = subscription else {
                continue;
            };
            let id = number(num(subscription, "id"));
            rows.push((connection.clone(), name.clone(), id, subscription));
        }
    }
    let label = |(connection, name, id, _): &(String, String, String, &Vec<Field>)| {
        [
            ("connection", connection.clone()),
            ("client", name.clone()),
            ("subscription", id.clone()),
        ]
    };
    for (metric, key, kind, help) in [
        (
            "herald_subscription_queue_records",
            "depth",
            "gauge",
            "Records waiting in a subscription's queue.",
        ),
        (
            "herald_subscription_queue_bytes",
            "depth_bytes",
            "gauge",
            "Bytes waiting in a subscription's queue.",
        ),
        (
            "herald_subscription_delivered_total",
            "delivered",
            "counter",
            "Records delivered to a subscription.",
        ),
    ] {
        let mut family = e.family(metric, kind, help);
        for row in &rows {
            let labels = label(row);
            let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            family.sample(&labels, num(row.3, key));
        }
    }
    let owned: Vec<_> = rows.iter().map(|row| (label(row), row.3)).collect();
    let labelled: Vec<Row<'_>> = owned
        .iter()
        .map(|(labels, fields)| {
            let labels = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
            (labels, fields.as_slice())
        })
        .collect();
    counts_by(
        e,
        &labelled,
        [
            (
                "herald_subscription_dropped_records_total",
                "drops",
                "reason",
                "Records a subscription lost, by reason.",
            ),
            (
                "herald_subscription_lost_records_by_priority_total",
                "dropped_priorities",
                "priority",
                "Records a subscription lost, by the records' priority (superseded records are no loss).",
            ),
        ],
    );
}

/// One labelled row of a table (a subscription, a route): its labels and its fields.
type Row<'a> = (Vec<(&'a str, &'a str)>, &'a [Field]);

/// Writes counters with a sample per row and entry of the row's map `key`, labelled with the
/// row's labels and `by` = the entry's name (losses by reason, by priority).
fn counts_by(
    e: &mut Exposition,
    rows: &[Row<'_>],
    metrics: [(&'static str, &str, &'static str, &'static str); 2],
) {
    for (metric, key, by, help) in metrics {
        let mut family = e.family(metric, "counter", help);
        for (labels, fields) in rows {
            for (name, count) in map(fields, key) {
                let mut all = labels.clone();
                all.push((by, name));
                family.sample(&all, float(count));
            }
        }
    }
}

/// The cluster's routes: each link's queue and what it dropped.
fn routes(e: &mut Exposition, data: &[Field]) {
    let links: Vec<&Vec<Field>> = array(map(data, "cluster"), "members")
        .iter()
        .filter_map(|l| match l {
            Value::Map(fields) => Some(fields),
            _ => None,
        })
        .collect();
    if links.is_empty() {
        return;
    }
    for (metric, key, kind, help) in [
        (
            "herald_route_queue_records",
            "queue",
            "gauge",
            "Records waiting for a cluster route.",
        ),
        (
            "herald_route_dropped_records_total",
            "dropped",
            "counter",
            "Records a cluster route's queue lost.",
        ),
    ] {
        let mut family = e.family(metric, kind, help);
        for link in &links {
            family.sample(&[("member", text(link, "member"))], num(link, key));
        }
    }
    let labelled: Vec<Row<'_>> = links
        .iter()
        .map(|link| (vec![("member", text(link, "member"))], link.as_slice()))
        .collect();
    counts_by(
        e,
        &labelled,
        [
            (
                "herald_route_dropped_records_by_reason_total",
                "drops",
                "reason",
                "Records a cluster route's queue lost, by reason.",
            ),
            (
                "herald_route_lost_records_by_priority_total",
                "dropped_priorities",
                "priority",
                "Records a cluster route's queue lost, by the records' priority.",
            ),
        ],
    );
}

/// The archive: written, backlog, drops by priority, errors.
fn archive(e: &mut Exposition, archive: &[Field]) {
    if archive.is_empty() {
        return;
    }
    e.single(
        "herald_archive_written_records_total",
        "counter",
        "Records the archive wrote.",
        num(archive, "written"),
    );
    e.single(
        "herald_archive_backlog_records",
        "gauge",
        "Records waiting for the archive's store (its lag).",
        num(archive, "backlog"),
    );
    e.single(
        "herald_archive_backlog_bytes",
        "gauge",
        "Bytes waiting for the archive's store.",
        num(archive, "backlog_bytes"),
    );
    e.single(
        "herald_archive_spill_bytes",
        "gauge",
        "Bytes in the archive's spill files.",
        num(archive, "spill_bytes"),
    );
    e.single(
        "herald_archive_write_errors_total",
        "counter",
        "Failed writes to the archive's store (retried).",
        num(archive, "write_errors"),
    );
    e.single(
        "herald_archive_expired_on_arrival_records_total",
        "counter",
        "Records already past their retention when they arrived.",
        num(archive, "expired_on_arrival"),
    );
    e.single(
        "herald_archive_expired_slots_total",
        "counter",
        "Slots (one retention class's day) dropped by expiry.",
        num(archive, "days_expired"),
    );
    let mut family = e.family(
        "herald_archive_dropped_records_total",
        "counter",
        "Records the archive could not keep (buffer and spill full), by priority.",
    );
    let mut any = false;
    for (key, value) in archive {
        if let Some(priority) = key.strip_prefix("dropped_") {
            family.sample(&[("priority", priority)], float(value));
            any = true;
        }
    }
    if !any {
        family.sample(&[("priority", "any")], num(archive, "dropped"));
    }
}

/// The syslog listeners.
fn syslog(e: &mut Exposition, syslog: &[Field]) {
    if syslog.is_empty() {
        return;
    }
    e.single(
        "herald_syslog_records_total",
        "counter",
        "syslog messages taken as records.",
        num(syslog, "records"),
    );
    e.single(
        "herald_syslog_bad_messages_total",
        "counter",
        "syslog messages refused as bad input.",
        num(syslog, "bad"),
    );
    e.single(
        "herald_syslog_connections_opened_total",
        "counter",
        "syslog TCP connections accepted.",
        num(syslog, "connections"),
    );
    e.single(
        "herald_syslog_refused_connections_total",
        "counter",
        "syslog TCP connections refused over the connection limits.",
        num(syslog, "refused"),
    );
    if monitor_value(syslog, "udp_dropped").is_some() {
        e.single(
            "herald_syslog_udp_dropped_total",
            "counter",
            "syslog UDP packets the kernel dropped, the socket's receive buffer full (a datagram each, or a run of one sender's).",
            num(syslog, "udp_dropped"),
        );
    }
}

fn monitor_value<'a>(data: &'a [Field], name: &str) -> Option<&'a Value> {
    data.iter().find(|(n, _)| n == name).map(|(_, v)| v)
}

fn float(value: &Value) -> f64 {
    match value {
        Value::Int(n) => *n as f64,
        Value::UInt(n) => *n as f64,
        Value::Float(f) => *f,
        Value::Bool(b) => f64::from(u8::from(*b)),
        _ => 0.0,
    }
}

fn num(data: &[Field], name: &str) -> f64 {
    monitor_value(data, name).map_or(0.0, float)
}

fn text<'a>(data: &'a [Field], name: &str) -> &'a str {
    match monitor_value(data, name) {
        Some(Value::Str(s)) => s,
        _ => "",
    }
}

fn map<'a>(data: &'a [Field], name: &str) -> &'a [Field] {
    match monitor_value(data, name) {
        Some(Value::Map(fields)) => fields,
        _ => &[],
    }
}

fn array<'a>(data: &'a [Field], name: &str) -> &'a [Value] {
    match monitor_value(data, name) {
        Some(Value::Array(values)) => values,
        _ => &[],
    }
}

/// Writes a sample value: integers without a fraction.
fn number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// Escapes a label value: backslash, double quote and line feed.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_families_with_help_type_and_escaped_labels() {
        let data: Vec<Field> = vec![
            ("server".into(), Value::Str("a\"b".into())),
            ("records_in".into(), Value::Int(12)),
            (
                "drops".into(),
                Value::Map(vec![("queue_full".into(), Value::Int(3))]),
            ),
        ];
        let text = exposition(&data, 5);
        assert!(
            text.contains("herald_build_info{server=\"a\\\"b\",version=\"\"} 1\n"),
            "{text}"
        );
        assert!(text.contains(
            "# TYPE herald_records_received_total counter\nherald_records_received_total 12\n"
        ));
        assert!(text.contains("herald_dropped_records_total{reason=\"queue_full\"} 3\n"));
        assert!(text.contains("herald_info_objects 5\n"));
        assert!(
            !text.contains("herald_archive"),
            "no archive, no archive metrics"
        );
    }

    #[test]
    fn a_routes_losses_by_reason_and_by_priority_are_labelled_with_its_member() {
        let counts = |name: &str, n| Value::Map(vec![(name.into(), Value::Int(n))]);
        let link = Value::Map(vec![
            ("member".into(), Value::Str("b".into())),
            ("queue".into(), Value::Int(1)),
            ("dropped".into(), Value::Int(4)),
            ("drops".into(), counts("queue_full", 4)),
            ("dropped_priorities".into(), counts("DEBUG", 4)),
        ]);
        let cluster = Value::Map(vec![("members".into(), Value::Array(vec![link]))]);
        let text = exposition(&[("cluster".into(), cluster)], 0);
        for line in [
            "herald_route_dropped_records_by_reason_total{member=\"b\",reason=\"queue_full\"} 4\n",
            "herald_route_lost_records_by_priority_total{member=\"b\",priority=\"DEBUG\"} 4\n",
        ] {
            assert!(text.contains(line), "{line} in {text}");
        }
    }
}
