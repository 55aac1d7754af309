//! Runs the crate's examples against a real server, as a user would.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use herald_testkit::TestServer;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

/// Returns the path of a built example; `cargo test` builds examples before tests.
fn example(name: &str) -> PathBuf {
    let exe = std::env::current_exe().expect("test binary path");
    let debug = exe
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target directory");
    debug.join("examples").join(name)
}

async fn run(name: &str, url: &str) -> String {
    let output = tokio::time::timeout(
        Duration::from_secs(20),
        Command::new(example(name)).arg(url).output(),
    )
    .await
    .expect("example finished in time")
    .expect("example started");
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(
        output.status.success(),
        "{name} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

#[tokio::test]
async fn publish_and_subscribe_examples_talk_to_each_other() {
    let server = TestServer::start().await;
    let mut subscriber = Command::new(example("subscribe"))
        .arg(server.url())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("subscribe example starts");
    let mut lines = BufReader::new(subscriber.stdout.take().expect("piped stdout")).lines();
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.as_deref(), Some("subscribed"));

    let published = run("publish", &server.url()).await;
    assert_eq!(published.lines().count(), 3, "{published}");

    let mut received = Vec::new();
    while let Ok(Ok(Some(line))) =
        tokio::time::timeout(Duration::from_secs(10), lines.next_line()).await
    {
        received.push(line);
    }
    assert_eq!(
        received,
        [
            "runcontrol.cmd [start] start run 42",
            "runcontrol.cmd [start] start run 43",
            "runcontrol.cmd [start] start run 44"
        ]
    );
    let status = tokio::time::timeout(Duration::from_secs(10), subscriber.wait())
        .await
        .unwrap()
        .unwrap();
    assert!(status.success());
}

#[tokio::test]
async fn log_example_logs_two_records() {
    let server = TestServer::start().await;
    assert_eq!(run("log", &server.url()).await.trim(), "logged 2 records");
    assert_eq!(
        server
            .monitor()
            .snapshot()
            .iter()
            .find(|(k, _)| k == "records_in")
            .map(|(_, v)| v.clone()),
        Some(herald_proto::Value::Int(2))
    );
}

#[tokio::test]
async fn logger_example_sends_its_records_and_the_flight_recorder_context() {
    let server = TestServer::start().await;
    assert_eq!(
        run("logger", &server.url()).await.trim(),
        "sent 4 records (1 as flight-recorder context), dropped 0"
    );
    assert_eq!(
        server
            .monitor()
            .snapshot()
            .iter()
            .find(|(k, _)| k == "records_in")
            .map(|(_, v)| v.clone()),
        Some(herald_proto::Value::Int(4))
    );
}
