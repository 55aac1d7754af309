//! The logger's disk buffer against a real server: records logged while no server runs
//! survive the producer's restart and arrive once, in order, with their timestamps; a full
//! quota sheds the lowest priorities and reports it; a torn tail is cut and counted.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use common::{fake_server, read_unacknowledged};

use herald_client::{Client, ClientOptions, Logger, LoggerError, LoggerOptions, Subscription};
use herald_proto::{Filter, Priority, Record, Value};
use herald_testkit::TestServer;

const WAIT: Duration = Duration::from_secs(10);

/// A directory of its own, removed at the end of the test.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let nanos = herald_proto::time::now_nanos();
        let dir =
            std::env::temp_dir().join(format!("herald-disk-{name}-{}-{nanos}", std::process::id()));
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A URL no server answers: a loopback port just bound and let go.
fn free_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    format!("herald://{}", listener.local_addr().unwrap())
}

fn options(subject: &str, dir: &Path, quota: u64) -> LoggerOptions {
    LoggerOptions {
        buffer_dir: Some(dir.to_path_buf()),
        buffer_quota: quota,
        // Room for every record of a test: losses here are the disk buffer's alone.
        buffer_records: 1 << 20,
        buffer_shards: 1,
        close_timeout: WAIT,
        ..LoggerOptions::new(subject)
    }
}

fn segments(dir: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "seg"))
        .collect();
    found.sort();
    found
}

/// Logs while no server answers, then drops the logger: the producer "restarts".
fn log_offline(dir: &Path, subject: &str, quota: u64, log: impl Fn(&Logger)) {
    let logger = Logger::connect(
        &free_url(),
        ClientOptions::default(),
        LoggerOptions {
            // No server will answer: the close waits this long for one, then keeps all.
            close_timeout: Duration::from_millis(200),
            ..options(subject, dir, quota)
        },
    )
    .unwrap();
    log(&logger);
    drop(logger);
}

async fn subscribe(server: &TestServer, subject: &str) -> (Client, Subscription) {
    let client = Client::connect(&server.url()).await.unwrap();
    let subscription = client
        .subscribe(Filter::subject(subject).unwrap())
        .await
        .unwrap();
    (client, subscription)
}

/// Receives records until none comes for a second.
async fn receive_all(subscription: &mut Subscription) -> Vec<Record> {
    let mut records = Vec::new();
    while let Ok(delivered) = subscription
        .next_record_timeout(Duration::from_secs(1))
        .await
    {
        records.push(delivered.into_record());
    }
    records
}

fn count_in(report: &Record, map: &str, key: &str) -> i64 {
    let Some((_, Value::Map(entries))) = report.fields.iter().find(|(n, _)| n == map) else {
        return 0;
    };
    match entries.iter().find(|(n, _)| n == key) {
        Some((_, Value::Int(n))) => *n,
        _ => 0,
    }
}

fn is_report(record: &Record) -> bool {
    record.type_name == herald_client::logger::DROP_REPORT_TYPE
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_logged_without_a_server_arrive_once_in_order_after_a_restart() {
    const N: usize = 20_000;
    let dir = TempDir::new("restart");
    let logged_by = std::sync::Mutex::new(0);
    log_offline(&dir.0, "APP.disk", 1 << 30, |logger| {
        for i in 0..N {
            logger.info(&format!("record {i}"));
        }
        // One producer per directory, naming the holder.
        let again = Logger::connect(
            &free_url(),
            ClientOptions::default(),
            options("APP.disk", &dir.0, 1 << 30),
        );
        match again {
            Err(LoggerError::BufferLocked { holder, .. }) => {
                assert!(
                    holder.contains(&format!("pid={}", std::process::id())),
                    "{holder}"
                );
            }
            other => panic!("expected BufferLocked, got {other:?}"),
        }
        *logged_by.lock().unwrap() = herald_proto::time::now_nanos();
    });
    assert!(!segments(&dir.0).is_empty(), "the records wait on disk");
    let logged_by = *logged_by.lock().unwrap();

    let server = TestServer::start().await;
    let (_subscriber, mut subscription) = subscribe(&server, "APP.disk").await;
    let logger = Logger::connect(
        &server.url(),
        ClientOptions::default(),
        options("APP.disk", &dir.0, 1 << 30),
    )
    .unwrap();
    let records = receive_all(&mut subscription).await;
    let texts: Vec<&str> = records.iter().map(|r| r.text.as_str()).collect();
    let expected: Vec<String> = (0..N).map(|i| format!("record {i}")).collect();
    assert_eq!(texts.len(), N, "every record arrives once");
    assert!(texts.iter().zip(&expected).all(|(t, e)| t == e), "in order");
    assert!(records.windows(2).all(|w| w[0].time <= w[1].time));
    assert!(
        records.iter().all(|r| r.time <= logged_by),
        "with the times they were logged at"
    );
    logger.flush(WAIT).await.unwrap();
    assert_eq!(logger.dropped(), 0);
    drop(logger);
    assert!(
        segments(&dir.0).is_empty(),
        "acknowledged segments are deleted"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_quota_sheds_the_lowest_priority_first_and_reports_it() {
    const N: usize = 2_000;
    let dir = TempDir::new("quota");
    let text = "x".repeat(200);
    log_offline(
        &dir.0,
        "APP.quota",
        herald_client::logger::MIN_BUFFER_QUOTA_BYTES,
        |logger| {
            for i in 0..N {
                let priority = if i % 20 == 0 {
                    Priority::Error
                } else {
                    Priority::Info
                };
                logger.log(priority, &format!("{i} {text}"), Vec::new());
                if i % 100 == 0 {
                    std::thread::sleep(Duration::from_millis(3)); // several spills, not one
                }
            }
        },
    );

    let server = TestServer::start().await;
    let (_subscriber, mut subscription) = subscribe(&server, "APP.quota").await;
    let quota = herald_client::logger::MIN_BUFFER_QUOTA_BYTES;
    let logger = Logger::connect(
        &server.url(),
        ClientOptions::default(),
        options("APP.quota", &dir.0, quota),
    )
    .unwrap();
    let records = receive_all(&mut subscription).await;
    drop(logger);
    let errors = records
        .iter()
        .filter(|r| r.priority == Priority::Error)
        .count();
    let infos = records
        .iter()
        .filter(|r| r.priority == Priority::Info)
        .count();
    let reports: Vec<&Record> = records.iter().filter(|r| is_report(r)).collect();
    assert_eq!(
        errors,
        N / 20,
        "no ERROR is shed while INFO records are on disk"
    );
    assert!(
        infos < N - N / 20,
        "the quota cannot hold them all: {infos}"
    );
    assert!(!reports.is_empty(), "the losses are reported");
    let shed: i64 = reports
        .iter()
        .map(|r| count_in(r, "dropped_by_reason", "disk_quota"))
        .sum();
    let shed_info: i64 = reports
        .iter()
        .map(|r| count_in(r, "dropped_by_priority", "INFO"))
        .sum();
    assert_eq!(
        shed as usize,
        N - N / 20 - infos,
        "every INFO record shed is counted"
    );
    assert_eq!(shed_info, shed, "only INFO records were shed");
    let numbers: Vec<usize> = records
        .iter()
        .filter(|r| !is_report(r))
        .map(|r| r.text.split(' ').next().unwrap().parse().unwrap())
        .collect();
    assert!(
        numbers.windows(2).all(|w| w[0] < w[1]),
        "what is left arrives in order"
    );
    server.stop().await;
}

/// A disk too small for the ERRORs alone sheds ERRORs, and the drop reports, ranked above
/// every record on disk, are never shed: every loss reaches the server in them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quota_too_small_for_the_errors_still_keeps_the_reports_of_their_loss() {
    const N: usize = 1_000;
    let dir = TempDir::new("quota-errors");
    let text = "x".repeat(200);
    let quota = herald_client::logger::MIN_BUFFER_QUOTA_BYTES;
    log_offline(&dir.0, "APP.errors", quota, |logger| {
        for i in 0..N {
            logger.log(Priority::Error, &format!("{i} {text}"), Vec::new());
            if i % 50 == 0 {
                std::thread::sleep(Duration::from_millis(3)); // several spills and reports
            }
        }
    });

    let server = TestServer::start().await;
    let (_subscriber, mut subscription) = subscribe(&server, "APP.errors").await;
    let logger = Logger::connect(
        &server.url(),
        ClientOptions::default(),
        options("APP.errors", &dir.0, quota),
    )
    .unwrap();
    let records = receive_all(&mut subscription).await;
    drop(logger);
    let errors = records.iter().filter(|r| !is_report(r)).count();
    let reports: Vec<&Record> = records.iter().filter(|r| is_report(r)).collect();
    assert!(0 < errors && errors < N, "the quota holds some: {errors}");
    assert!(!reports.is_empty(), "the losses are reported");
    let lost = |priority: &str| -> i64 {
        reports
            .iter()
            .map(|r| count_in(r, "dropped_by_priority", priority))
            .sum()
    };
    assert_eq!(
        lost("ERROR") as usize,
        N - errors,
        "every ERROR shed is counted"
    );
    let total: i64 = reports.iter().copied().map(dropped).sum();
    assert_eq!(
        total,
        lost("ERROR"),
        "no report was shed (it would count itself)"
    );
    server.stop().await;
}

/// A drop report's `dropped`: every loss it counts.
fn dropped(report: &Record) -> i64 {
    match report.fields.iter().find(|(n, _)| n == "dropped") {
        Some((_, Value::Int(n))) => *n,
        _ => 0,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_torn_tail_is_cut_and_counted() {
    const N: usize = 100;
    let dir = TempDir::new("torn");
    log_offline(&dir.0, "APP.torn", 1 << 30, |logger| {
        for i in 0..N {
            logger.warning(&format!("record {i}"));
        }
    });
    let last = segments(&dir.0).pop().expect("a segment");
    let size = std::fs::metadata(&last).unwrap().len();
    let file = std::fs::OpenOptions::new().write(true).open(&last).unwrap();
    file.set_len(size - 5).unwrap(); // the last entry loses its end

    let server = TestServer::start().await;
    let (_subscriber, mut subscription) = subscribe(&server, "APP.torn").await;
    let logger = Logger::connect(
        &server.url(),
        ClientOptions::default(),
        options("APP.torn", &dir.0, 1 << 30),
    )
    .unwrap();
    let records = receive_all(&mut subscription).await;
    assert_eq!(logger.dropped(), 1);
    drop(logger);
    let texts: Vec<&str> = records
        .iter()
        .filter(|r| !is_report(r))
        .map(|r| r.text.as_str())
        .collect();
    let expected: Vec<String> = (0..N - 1).map(|i| format!("record {i}")).collect();
    assert_eq!(texts, expected);
    let report = records
        .iter()
        .find(|r| is_report(r))
        .expect("a drop report");
    assert_eq!(count_in(report, "dropped_by_reason", "disk_torn"), 1);
    assert_eq!(count_in(report, "dropped_by_priority", "WARNING"), 1);
    server.stop().await;
}

/// Starts a server, then a logger on the disk buffer in `dir` (the producer's restart), and
/// checks that the `count` records `record 0`, `record 1`… it kept arrive once, in order,
/// and no drop report with them.
async fn restart_and_receive_all(dir: &TempDir, subject: &str, count: usize) {
    let server = TestServer::start().await;
    let (_subscriber, mut subscription) = subscribe(&server, subject).await;
    let logger = Logger::connect(
        &server.url(),
        ClientOptions::default(),
        options(subject, &dir.0, 1 << 30),
    )
    .unwrap();
    let records = receive_all(&mut subscription).await;
    let texts: Vec<String> = records
        .iter()
        .filter(|r| !is_report(r))
        .map(|r| r.text.clone())
        .collect();
    let expected: Vec<String> = (0..count).map(|i| format!("record {i}")).collect();
    assert_eq!(texts, expected, "every record arrives once, in order");
    assert!(
        records.iter().all(|r| !is_report(r)),
        "nothing was lost: {records:?}"
    );
    drop(logger);
}

/// A server that says `WELCOME` and then reads without ever acknowledging: records the
/// logger sends it are sent, never acknowledged.
fn silent_server() -> (String, std::thread::JoinHandle<usize>) {
    fake_server("silent", |mut stream| {
        read_unacknowledged(&mut stream, || false)
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_sent_and_never_acknowledged_stay_on_disk_at_close() {
    const N: usize = 500;
    let dir = TempDir::new("unacknowledged");
    let (url, silent) = silent_server();
    let logger = Logger::connect(
        &url,
        ClientOptions::default(),
        LoggerOptions {
            close_timeout: Duration::from_millis(500),
            ..options("APP.unacked", &dir.0, 1 << 30)
        },
    )
    .unwrap();
    for i in 0..N {
        logger.info(&format!("record {i}"));
    }
    // Sent to a server that never acknowledges: at the close they go to disk.
    drop(logger);
    assert!(
        !segments(&dir.0).is_empty(),
        "the unacknowledged records wait on disk"
    );
    drop(silent);

    restart_and_receive_all(&dir, "APP.unacked", N).await;
}

/// A server that says `WELCOME`, reads what comes for `listen`, never acknowledging it, and
/// then refuses the client for good (`unauthorized`, which no other connection would
/// change) and stops listening: the logger's own connection gives up holding every record
/// it sent.
fn refusing_server(listen: Duration) -> (String, std::thread::JoinHandle<usize>) {
    fake_server("refusing", move |mut stream| {
        let until = std::time::Instant::now() + listen;
        let read = read_unacknowledged(&mut stream, || std::time::Instant::now() >= until);
        let refusal = herald_proto::Frame::Error(herald_proto::ErrorFrame {
            cid: 0,
            code: herald_proto::ErrorCode::Unauthorized,
            message: "token revoked".into(),
        });
        let _ = stream.write_all(&refusal.to_bytes());
        read
    })
}

/// Waits until `done` holds, at most [`WAIT`].
async fn wait_for(mut done: impl FnMut() -> bool) -> bool {
    let until = std::time::Instant::now() + WAIT;
    while !done() && std::time::Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    done()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_a_connection_that_gives_up_are_counted_lost() {
    const N: usize = 300;
    let (url, server) = refusing_server(Duration::from_millis(500));
    let logger = Logger::connect(
        &url,
        ClientOptions::default(),
        LoggerOptions {
            buffer_records: 1 << 16,
            close_timeout: Duration::from_millis(200),
            ..LoggerOptions::new("APP.refused")
        },
    )
    .unwrap();
    for i in 0..N {
        logger.warning(&format!("record {i}"));
    }
    assert!(server.join().unwrap() > 0, "the records were sent");
    // Sent, never acknowledged, and the connection gave up: each is lost, and counted.
    assert!(
        wait_for(|| logger.dropped() >= N as u64).await,
        "{} of {N} counted",
        logger.dropped()
    );
    assert_eq!(logger.dropped(), N as u64);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_of_a_connection_that_gives_up_go_to_the_disk_buffer() {
    const N: usize = 300;
    let dir = TempDir::new("gave-up");
    let (url, server) = refusing_server(Duration::from_millis(800));
    let logger = Logger::connect(
        &url,
        ClientOptions::default(),
        LoggerOptions {
            close_timeout: Duration::from_millis(200),
            ..options("APP.gaveup", &dir.0, 1 << 30)
        },
    )
    .unwrap();
    // Connected, with nothing on disk: records go straight from memory to the server.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(segments(&dir.0).is_empty());
    for i in 0..N {
        logger.info(&format!("record {i}"));
    }
    // Looked at while the server still reads (it refuses 800 ms after it accepted, some
    // 400 ms from here): once it has refused, the records go to disk at once.
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        segments(&dir.0).is_empty(),
        "sent from memory, not from disk"
    );
    assert!(server.join().unwrap() > N * 20, "the records were sent");
    assert!(
        wait_for(|| !segments(&dir.0).is_empty()).await,
        "what the connection held goes to disk"
    );
    drop(logger);

    restart_and_receive_all(&dir, "APP.gaveup", N).await;
}
