//! The simulated facility: `herald serve --demo` and `herald demo --server URL`, real
//! processes on free loopback ports, seen through the Rust client, stopped with SIGTERM.

use std::collections::BTreeSet;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use herald_client::{Client, Subscription};
use herald_proto::info::{ObjectData, SelectionData};
use herald_proto::{Filter, Priority};
use herald_testkit::ServeProcess;

const HERALD: &str = env!("CARGO_BIN_EXE_herald");
/// How long the simulation may take to bring its objects up.
const STARTUP: Duration = Duration::from_secs(10);
/// How long a SIGTERMed process may take to exit.
const EXIT: Duration = Duration::from_secs(10);

/// Waits until the server holds at least `count` information objects; returns them.
async fn objects_at_least(client: &Client, count: usize) -> Vec<ObjectData> {
    let deadline = Instant::now() + STARTUP;
    loop {
        let objects = client.list_info(SelectionData::default()).await.unwrap();
        if objects.len() >= count {
            return objects;
        }
        assert!(
            Instant::now() < deadline,
            "only {} objects after {STARTUP:?}",
            objects.len()
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Reads logs until they span at least `priorities` priorities and `subjects` subjects.
async fn varied_logs(
    logs: &mut Subscription,
    priorities: usize,
    subjects: usize,
) -> (BTreeSet<Priority>, BTreeSet<String>) {
    let (mut seen_priorities, mut seen_subjects) = (BTreeSet::new(), BTreeSet::new());
    let deadline = Instant::now() + STARTUP;
    while seen_priorities.len() < priorities || seen_subjects.len() < subjects {
        assert!(
            Instant::now() < deadline,
            "after {STARTUP:?}: priorities {seen_priorities:?}, {} subjects",
            seen_subjects.len()
        );
        let delivered = logs.next_record_timeout(STARTUP).await.unwrap();
        let record = delivered.record();
        assert!(!record.origin.host.is_empty() && record.origin.line.is_some());
        seen_priorities.insert(record.priority);
        seen_subjects.insert(record.subject.clone());
    }
    (seen_priorities, seen_subjects)
}

async fn subscribe(client: &Client, subject: Option<&str>, kind: &str) -> Subscription {
    let filter = Filter::parse(subject, None, None, &[], Some(kind)).unwrap();
    client.subscribe(filter).await.unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_demo_brings_a_facility_to_life_and_stops_cleanly() {
    let mut server = ServeProcess::start(HERALD, &["--demo", "--demo-seed", "7"]);
    let client = Client::connect(&server.url()).await.unwrap();
    let mut logs = subscribe(&client, None, "log").await;
    let mut commands = subscribe(&client, Some("CONTROL.runcontrol.cmd"), "message").await;

    let objects = objects_at_least(&client, 200).await;
    let types: BTreeSet<&str> = objects.iter().map(|o| o.type_name.as_str()).collect();
    for wanted in [
        "AntennaMount",
        "Cryostat",
        "Weather",
        "CorrelatorStatus",
        "SubsystemHealth",
    ] {
        assert!(types.contains(wanted), "no {wanted} among {types:?}");
    }
    let declared = client.info_types().await.unwrap();
    let mount = declared.iter().find(|t| t.name == "AntennaMount").unwrap();
    assert!(mount.attributes.iter().all(|a| !a.description.is_empty()));

    let (priorities, subjects) = varied_logs(&mut logs, 4, 10).await;
    assert!(
        subjects.iter().any(|s| s.starts_with("ANTENNA.DV")),
        "{subjects:?}"
    );
    assert!(priorities.contains(&Priority::Info), "{priorities:?}");

    let command = commands.next_record_timeout(STARTUP).await.unwrap();
    let kinds = ["configure", "start", "scan", "stop"];
    assert!(kinds.contains(&command.record().type_name.as_str()));

    let names = [
        "ANTENNA.DV01.Mount",
        "WEATHER.Station1",
        "CORRELATOR.Node01",
    ];
    let before = client.get_infos(&names).await.unwrap();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = client.get_infos(&names).await.unwrap();
    for (before, after) in before.iter().zip(&after) {
        let (before, after) = (before.as_ref().unwrap(), after.as_ref().unwrap());
        assert!(
            after.version > before.version,
            "{} did not change",
            after.name
        );
        assert_ne!(
            after.attributes, before.attributes,
            "{} kept its values",
            after.name
        );
    }

    client.close(Duration::from_secs(2)).await.unwrap();
    let status = server.terminate(EXIT);
    assert!(status.success(), "serve --demo exited with {status}");
}

/// A child process killed (SIGKILL) if the test fails before it stopped it.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn herald_demo_simulates_against_a_running_server_until_terminated() {
    let server = ServeProcess::start(HERALD, &[]);
    let demo = Command::new(HERALD)
        .args(["demo", "--server", &server.url(), "--seed", "3"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("herald demo starts");
    let mut demo = ChildGuard(demo);
    let client = Client::connect(&server.url()).await.unwrap();
    let mut antenna_logs = subscribe(&client, Some("ANTENNA.*"), "log").await;
    objects_at_least(&client, 200).await;
    antenna_logs
        .next_record_timeout(STARTUP)
        .await
        .expect("antenna logs arrive");

    let status = herald_testkit::terminate(&mut demo.0, EXIT);
    assert!(status.success(), "herald demo exited with {status}");
    // Stopped means stopped: the objects stay, their values no longer move.
    let before = client
        .get_info("ANTENNA.DV01.Mount")
        .await
        .unwrap()
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let after = client
        .get_info("ANTENNA.DV01.Mount")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(before.version, after.version);
}

#[test]
fn a_demo_seed_without_demo_is_refused() {
    let output = Command::new(HERALD)
        .args(["serve", "--demo-seed", "3", "--check-config"])
        .output()
        .expect("herald runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--demo"), "{stderr}");
}
