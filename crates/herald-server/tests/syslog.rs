//! The syslog front door with the util-linux `logger` a Linux host has: RFC 5424 and RFC
//! 3164, over UDP and over TCP (octet counting and newline framing), routed to a subscriber
//! as log records; bad input is counted, sampled for the monitor, and the listener goes on.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use common::{connect, int, map, WAIT};
use herald_client::{Event, Subscription};
use herald_proto::value::Value;
use herald_proto::{Filter, Priority, Record};
use herald_server::config::SyslogConfig;
use herald_server::Config;
use herald_testkit::TestServer;

async fn syslog_server() -> (TestServer, SocketAddr, SocketAddr) {
    let loopback = "127.0.0.1:0".parse().unwrap();
    let config = Config {
        syslog: Some(SyslogConfig {
            udp: Some(loopback),
            tcp: Some(loopback),
            subject: "syslog.{host}.{app}".into(),
            max_message_bytes: 64 * 1024,
        }),
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let (udp, tcp) = server.syslog_addrs();
    (
        server,
        udp.expect("a UDP listener"),
        tcp.expect("a TCP listener"),
    )
}

/// A client subscribed to every syslog record.
async fn watch(server: &TestServer) -> (herald_client::Client, Subscription) {
    let client = connect(server, "watcher").await;
    let records = client
        .subscribe(Filter::subject("syslog.*").unwrap())
        .await
        .unwrap();
    client.flush(WAIT).await.unwrap();
    (client, records)
}

/// Runs util-linux `logger` against `port` with `args` and `message`.
fn logger(port: u16, args: &[&str], message: &str) {
    let status = std::process::Command::new("logger")
        .args(["-n", "127.0.0.1", "-P", &port.to_string()])
        .args(args)
        .arg(message)
        .status()
        .expect("util-linux `logger` runs (apt-get install bsdutils)");
    assert!(status.success(), "logger {args:?} failed: {status}");
}

async fn next_record(subscription: &mut Subscription) -> Record {
    match tokio::time::timeout(WAIT, subscription.next()).await {
        Ok(Some(Event::Record(delivered))) => delivered.into_record(),
        Ok(other) => panic!("expected a record, got {other:?}"),
        Err(_) => panic!("no syslog record within {WAIT:?}"),
    }
}

#[tokio::test]
async fn logger_reaches_subscribers_in_both_formats_over_udp_and_tcp() {
    let (server, udp, tcp) = syslog_server().await;
    let (client, mut records) = watch(&server).await;
    let host = hostname();

    logger(
        udp.port(),
        &[
            "-d",
            "--rfc5424",
            "-t",
            "ctrl",
            "--msgid",
            "ID9",
            "--sd-id",
            "beam@32473",
            "--sd-param",
            "current=\"1.5 mA\"",
            "-p",
            "local3.warning",
        ],
        "5424 over UDP",
    );
    let record = next_record(&mut records).await;
    assert_eq!(
        record.subject,
        format!("syslog.{}.ctrl", host.replace('.', "_"))
    );
    assert_eq!(record.priority, Priority::Warning);
    assert_eq!(record.text, "5424 over UDP");
    assert_eq!(record.origin.host, host);
    assert_eq!(record.origin.process, "ctrl");
    assert_eq!(record.origin.log_id, "ID9");
    let field = |name: &str| {
        record
            .fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    };
    assert_eq!(field("facility"), Some(&Value::Str("local3".into())));
    assert_eq!(
        field("beam@32473"),
        Some(&Value::Map(vec![(
            "current".into(),
            Value::Str("1.5 mA".into())
        )]))
    );
    let age = herald_proto::time::now_nanos() - record.time;
    assert!(
        (0..60_000_000_000).contains(&age),
        "the sender's time, {age} ns ago"
    );

    logger(
        udp.port(),
        &["-d", "--rfc3164", "-t", "vac", "-p", "daemon.err"],
        "3164 over UDP",
    );
    let record = next_record(&mut records).await;
    assert_eq!(
        (record.priority, record.text.as_str()),
        (Priority::Error, "3164 over UDP")
    );
    assert_eq!(
        record.subject,
        format!("syslog.{}.vac", host.replace('.', "_"))
    );

    logger(
        tcp.port(),
        &[
            "-T",
            "--rfc5424",
            "--octet-count",
            "-t",
            "rf",
            "-p",
            "user.info",
        ],
        "octets",
    );
    let record = next_record(&mut records).await;
    assert_eq!(
        (record.priority, record.text.as_str()),
        (Priority::Info, "octets")
    );

    logger(
        tcp.port(),
        &["-T", "--rfc3164", "-t", "cryo", "-p", "user.crit"],
        "lines",
    );
    let record = next_record(&mut records).await;
    assert_eq!(
        (record.priority, record.text.as_str()),
        (Priority::Critical, "lines")
    );
    assert_eq!(record.origin.process, "cryo");

    let monitor = client.monitor().await.unwrap();
    let syslog = map(&monitor, "syslog");
    assert_eq!(int(syslog, "records"), 4);
    assert_eq!(int(syslog, "bad"), 0);
    assert_eq!(int(syslog, "connections"), 2);
    server.stop().await;
}

#[tokio::test]
async fn bad_input_is_counted_and_sampled_and_the_listeners_go_on() {
    let (server, udp, tcp) = syslog_server().await;
    let (client, mut records) = watch(&server).await;
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.send_to(b"not syslog at all", udp).unwrap();
    socket.send_to(b"<13>1 yesterday h a - - - x", udp).unwrap();
    socket
        .send_to(b"<14>1 - h app - - - still here", udp)
        .unwrap();
    let record = next_record(&mut records).await;
    assert_eq!(record.text, "still here");
    assert_eq!(record.subject, "syslog.h.app");

    // Over TCP: a bad line between good frames, and a frame the stream ends inside.
    use std::io::Write;
    let mut stream = std::net::TcpStream::connect(tcp).unwrap();
    stream
        .write_all(b"<14>1 - h app - - - one\n<999>bad\n23 <14>1 - h app - - - two")
        .unwrap();
    stream.write_all(b"\n30 <14>1 - h").unwrap();
    drop(stream);
    assert_eq!(next_record(&mut records).await.text, "one");
    assert_eq!(next_record(&mut records).await.text, "two");

    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let monitor = client.monitor().await.unwrap();
        let syslog = map(&monitor, "syslog");
        if int(syslog, "bad") == 4 {
            let last = map(syslog, "last_bad");
            let Some((_, Value::Str(peer))) = last.iter().find(|(n, _)| n == "peer") else {
                panic!("last_bad names its sender: {last:?}");
            };
            assert_eq!(peer, "127.0.0.1");
            assert_eq!(int(syslog, "records"), 3);
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "bad input counted: {syslog:?}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let monitor = client.monitor().await.unwrap();
    let last = map(map(&monitor, "syslog"), "last_bad");
    let text = |name: &str| match last.iter().find(|(n, _)| n == name) {
        Some((_, Value::Str(s))) => s.clone(),
        other => panic!("{name}: {other:?}"),
    };
    assert!(
        text("error").contains("stream ended inside a frame"),
        "{last:?}"
    );
    server.stop().await;
}

/// The name `logger` puts in its messages: the kernel's host name.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .expect("the host name")
        .trim()
        .to_string()
}

/// TCP senders have the native port's connection limits: one over them is closed at once
/// and counted, the others go on.
#[tokio::test]
async fn tcp_connections_over_the_limit_are_refused_and_counted() {
    let loopback = "127.0.0.1:0".parse().unwrap();
    let config = Config {
        syslog: Some(SyslogConfig {
            udp: None,
            tcp: Some(loopback),
            subject: "syslog.{host}.{app}".into(),
            max_message_bytes: 64 * 1024,
        }),
        max_connections_per_address: 2,
        ..Config::default()
    };
    let server = TestServer::start_with(config).await;
    let (_, tcp) = server.syslog_addrs();
    let tcp = tcp.unwrap();
    let (client, mut records) = watch(&server).await;
    use std::io::Write;
    let held: Vec<_> = (0..2)
        .map(|_| std::net::TcpStream::connect(tcp).unwrap())
        .collect();
    let syslog_int = |name: &'static str| {
        let client = client.clone();
        async move { int(map(&client.monitor().await.unwrap(), "syslog"), name) }
    };
    let deadline = tokio::time::Instant::now() + WAIT;
    while syslog_int("connections").await < 2 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "two connections accepted"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let mut third = tokio::net::TcpStream::connect(tcp).await.unwrap();
    let mut byte = [0u8; 1];
    let read = tokio::time::timeout(WAIT, tokio::io::AsyncReadExt::read(&mut third, &mut byte));
    assert_eq!(
        read.await.expect("closed in time").unwrap_or(0),
        0,
        "the third is closed"
    );
    assert_eq!(syslog_int("refused").await, 1);
    let mut first = &held[0];
    first
        .write_all(b"<14>1 - h app - - - still taken\n")
        .unwrap();
    drop(held);
    assert_eq!(next_record(&mut records).await.text, "still taken");
    server.stop().await;
}
