//! `GET /metrics`: the monitor's numbers in Prometheus's text format, checked by Prometheus's
//! own `promtool check metrics` on a server with a subscriber that lost records, an archive
//! and a syslog listener.

use super::*;
use herald_proto::{Priority, Record};
use herald_server::config::SyslogConfig;
use herald_server::Config;

/// Runs `promtool check metrics` on `text`; returns its report (empty when clean).
fn promtool(text: &str) -> (bool, String) {
    use std::io::Write;
    let mut child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("promtool runs (apt-get install prometheus; .ci/run installs it)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), report)
}

#[tokio::test]
async fn metrics_pass_promtool_and_match_the_monitor() {
    let loopback = "127.0.0.1:0".parse().unwrap();
    let mut config = Config {
        syslog: Some(SyslogConfig {
            udp: Some(loopback),
            tcp: None,
            subject: "syslog.{host}".into(),
            max_message_bytes: 65_536,
        }),
        ..Config::default()
    };
    config.queue.max_records = 10;
    let server = TestServer::start_with(config).await;
    let client = Client::connect(&server.url()).await.unwrap();
    // A subscriber that never reads: its queue of 10 fills and the rest is dropped.
    let _stalled = client
        .subscribe(Filter::subject("M.*").unwrap())
        .await
        .unwrap();
    for i in 0..50 {
        let record = Record {
            priority: Priority::Warning,
            text: format!("r{i}"),
            ..Record::new(Kind::Log, "M.x")
        };
        client.publish(&record).await.unwrap();
    }
    client.flush(WAIT).await.unwrap();
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let (udp, _) = server.syslog_addrs();
    socket.send_to(b"not syslog", udp.unwrap()).unwrap();
    let deadline = tokio::time::Instant::now() + WAIT;
    let text = loop {
        let response = get(&server, "/metrics").await;
        assert_eq!(response.status, 200);
        assert_eq!(
            response.header("content-type"),
            Some("text/plain; version=0.0.4; charset=utf-8")
        );
        let delivered = response
            .body
            .lines()
            .any(|l| l.starts_with("herald_subscription_delivered_total{") && l.ends_with(" 10"));
        if delivered
            && response
                .body
                .contains("herald_syslog_bad_messages_total 1\n")
        {
            break response.body;
        }
        assert!(tokio::time::Instant::now() < deadline, "{}", response.body);
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (clean, report) = promtool(&text);
    assert!(
        clean && report.trim().is_empty(),
        "promtool: {report}\n{text}"
    );
    let monitor = get(&server, "/monitor").await.json();
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix) && !l.contains("reason=\"closed\""))
            .unwrap_or_else(|| panic!("no `{prefix}` in\n{text}"))
            .rsplit(' ')
            .next()
            .unwrap()
            .parse::<u64>()
            .unwrap()
    };
    assert_eq!(line("herald_records_received_total "), 50);
    assert_eq!(
        line("herald_records_received_total "),
        monitor["records_in"].as_u64().unwrap()
    );
    assert_eq!(
        line("herald_dropped_records_total{reason=\"queue_full\"} "),
        40
    );
    let subscription = text
        .lines()
        .find(|l| {
            l.starts_with("herald_subscription_dropped_records_total{")
                && l.contains("reason=\"queue_full\"")
        })
        .unwrap_or_else(|| panic!("a subscription's queue_full drops in\n{text}"));
    assert!(subscription.ends_with(" 40"), "{subscription}");
    assert!(
        subscription.contains("subscription=\"1\""),
        "{subscription}"
    );
    // The same 40, by the records' priority: all WARNING.
    let by_priority = text
        .lines()
        .find(|l| l.starts_with("herald_subscription_lost_records_by_priority_total{"))
        .unwrap_or_else(|| panic!("a subscription's losses by priority in\n{text}"));
    assert!(
        by_priority.contains("priority=\"WARNING\"") && by_priority.ends_with(" 40"),
        "{by_priority}"
    );
    // The 10 the queue held went on to the client (which buffers what the program has not
    // read yet).
    assert_eq!(line("herald_subscription_delivered_total{"), 10);
    assert_eq!(line("herald_subscription_queue_records{"), 0);
    assert!(
        text.contains("herald_archive_written_records_total "),
        "{text}"
    );
    assert!(
        text.contains("herald_syslog_udp_dropped_total 0\n"),
        "{text}"
    );
    server.stop().await;
}

#[tokio::test]
async fn an_idle_servers_metrics_pass_promtool_too() {
    let server = TestServer::start().await;
    let open = get(&server, "/metrics").await;
    assert_eq!(open.status, 200, "a server without identities is open");
    let (clean, report) = promtool(&open.body);
    assert!(clean, "{report}");
    server.stop().await;
}
