//! Live reload of a real `herald serve` process: SIGHUP and `herald admin reload` read the
//! configuration file again; what changed is in force for new subscriptions at once, what
//! waits for a restart is named, and a bad file is refused with the old one kept.

use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use herald_client::{Client, ClientError};
use herald_proto::frame::ErrorCode;
use herald_proto::Filter;
use herald_testkit::{temp_dir, ServeProcess, TempDirGuard};

const HERALD: &str = env!("CARGO_BIN_EXE_herald");

fn reload(server: &ServeProcess, json: bool) -> Output {
    let mut command = Command::new(HERALD);
    command.args(["admin", "reload", "--server", &server.url()]);
    if json {
        command.arg("--json");
    }
    let child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("herald admin reload starts");
    child.wait_with_output().expect("output")
}

/// Whether a connection may now hold a second subscription.
async fn second_subscription_refused(url: &str) -> bool {
    let client = Client::connect(url).await.expect("connects");
    // Held: a subscription dropped ends.
    let _first = client
        .subscribe(Filter::subject("A").unwrap())
        .await
        .expect("first");
    let second = client.subscribe(Filter::subject("B").unwrap()).await;
    match second {
        Ok(_) => false,
        Err(ClientError::Server {
            code: ErrorCode::Limit,
            ..
        }) => true,
        Err(other) => panic!("unexpected: {other}"),
    }
}

#[test]
fn sighup_and_admin_reload_read_the_file_again() {
    let dir = TempDirGuard(temp_dir("reload-cli"));
    let path = dir.0.join("herald.toml");
    std::fs::write(&path, "max_subscriptions = 10\n").unwrap();
    let mut server = ServeProcess::start(HERALD, &["--config", path.to_str().unwrap()]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    assert!(!runtime.block_on(second_subscription_refused(&server.url())));

    // SIGHUP: the new limit holds for the connections made after it.
    std::fs::write(&path, "max_subscriptions = 1\n").unwrap();
    let status = Command::new("kill")
        .args(["-HUP", &server.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(5);
    while !runtime.block_on(second_subscription_refused(&server.url())) {
        if Instant::now() > deadline {
            let output = reload(&server, true);
            panic!("SIGHUP did not apply the new limit; a reload now says {output:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }

    // `herald admin reload`: what changed now, what waits for a restart.
    std::fs::write(&path, "max_subscriptions = 5\nname = \"renamed\"\n").unwrap();
    let output = reload(&server, false);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{output:?}");
    assert!(
        stdout.contains("in force now: max_subscriptions"),
        "{stdout}"
    );
    assert!(stdout.contains("waiting for a restart: name"), "{stdout}");
    let output = reload(&server, true);
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["applied"], serde_json::json!([]));
    assert_eq!(json["restart"], serde_json::json!(["name"]));

    // A bad file: refused whole, the reason named, a failing exit; the old limit stays.
    std::fs::write(&path, "max_subscriptions = 1\nqueue_records = \"many\"\n").unwrap();
    let output = reload(&server, false);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("queue_records"), "{stderr}");
    assert!(stderr.contains("old one stays in force"), "{stderr}");
    assert!(!runtime.block_on(second_subscription_refused(&server.url())));
    server.terminate(Duration::from_secs(10));
}
