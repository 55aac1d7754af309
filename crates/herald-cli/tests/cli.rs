//! The `herald` binary as people use it: a real `herald serve` process, and the client
//! commands against it.

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const HERALD: &str = env!("CARGO_BIN_EXE_herald");

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/config")
        .join(name)
}

/// A `herald serve` process on a free port, and the client commands against it.
struct ServeProcess(herald_testkit::ServeProcess);

impl ServeProcess {
    fn start() -> ServeProcess {
        ServeProcess(herald_testkit::ServeProcess::start(HERALD, &[]))
    }

    fn herald(&self, args: &[&str]) -> Output {
        let mut command = Command::new(HERALD);
        command.args(args).args(["--server", &self.0.url()]);
        run_bounded(command)
    }
}

/// Runs a command, failing the test if it takes more than 20 s.
fn run_bounded(mut command: Command) -> Output {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("command starts");
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().expect("waitable").is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("command did not finish in 20 s: {command:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.wait_with_output().expect("output")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn log_publish_tail_and_monitor_against_a_real_server() {
    let server = ServeProcess::start();
    let mut tail = Command::new(HERALD);
    tail.args([
        "tail",
        "--json",
        "-n",
        "2",
        "--priority",
        ">=WARNING,=INFO",
        "--server",
        &server.0.url(),
    ]);
    let tail = tail
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tail starts");
    // Give tail time to subscribe; records published before that are not for it.
    let subscribed = Instant::now();
    loop {
        let monitor = server.herald(&["monitor", "--json"]);
        let json: serde_json::Value =
            serde_json::from_slice(&monitor.stdout).expect("monitor prints JSON");
        if json["subscriptions"] == 1 {
            break;
        }
        assert!(
            subscribed.elapsed() < Duration::from_secs(10),
            "tail never subscribed: {json}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let debug = server.herald(&["log", "-p", "DEBUG", "-s", "ANTENNA.DV01", "not shown"]);
    assert!(debug.status.success(), "{}", text(&debug.stderr));
    let logged = server.herald(&[
        "log",
        "-p",
        "WARNING",
        "-s",
        "ANTENNA.DV01",
        "-f",
        "axis=az",
        "encoder fault",
    ]);
    assert!(logged.status.success(), "{}", text(&logged.stderr));
    let published = server.herald(&[
        "publish",
        "runcontrol.cmd",
        "start",
        "start run 42",
        "-f",
        "run=42",
    ]);
    assert!(published.status.success(), "{}", text(&published.stderr));

    let output = tail.wait_with_output().expect("tail ends after 2 records");
    assert!(output.status.success(), "{}", text(&output.stderr));
    let lines: Vec<serde_json::Value> = text(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["priority"], "WARNING");
    assert_eq!(lines[0]["subject"], "ANTENNA.DV01");
    assert_eq!(lines[0]["text"], "encoder fault");
    assert_eq!(lines[0]["fields"]["axis"], "az");
    assert_eq!(lines[1]["kind"], "message");
    assert_eq!(lines[1]["type"], "start");
    assert_eq!(lines[1]["fields"]["run"], 42);

    let monitor = server.herald(&["monitor"]);
    let monitor = text(&monitor.stdout);
    assert!(monitor.contains("records in 3"), "{monitor}");
}

#[test]
fn tail_prints_one_line_per_record_for_people() {
    let server = ServeProcess::start();
    let mut tail = Command::new(HERALD);
    tail.args([
        "tail",
        "-n",
        "1",
        "--subject",
        "ANTENNA.*",
        "--server",
        &server.0.url(),
    ]);
    let tail = tail
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tail starts");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let monitor = server.herald(&["monitor", "--json"]);
        let json: serde_json::Value = serde_json::from_slice(&monitor.stdout).expect("JSON");
        if json["subscriptions"] == 1 {
            break;
        }
        assert!(Instant::now() < deadline, "tail never subscribed");
        std::thread::sleep(Duration::from_millis(50));
    }
    server.herald(&[
        "log",
        "-p",
        "ERROR",
        "-s",
        "ANTENNA.DV02.Mount",
        "axis stopped",
    ]);
    let output = tail.wait_with_output().expect("tail ends");
    let line = text(&output.stdout);
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields[0].len(), "2026-11-20T02:00:00.123Z".len(), "{line}");
    assert!(
        fields[0].ends_with('Z') && fields[0].contains('T'),
        "{line}"
    );
    assert_eq!(&fields[1..3], ["ERROR", "ANTENNA.DV02.Mount"], "{line}");
    assert!(line.trim_end().ends_with("axis stopped"), "{line}");
}

#[test]
fn bad_input_gets_a_clear_error_and_a_failing_exit() {
    let server = ServeProcess::start();
    let cases: [(&[&str], &str); 4] = [
        (
            &["log", "-p", "WARN", "-s", "X", "t"],
            "error: unknown priority `WARN`",
        ),
        (
            &["tail", "--subject", ""],
            "error: bad subject pattern: empty pattern",
        ),
        (
            &["log", "-s", "A.*", "t"],
            "error: invalid record: subject `A.*` contains `*`",
        ),
        (
            &["publish", "a", "b", "c", "-f", "novalue"],
            "error: bad field `novalue` (expected name=value)",
        ),
    ];
    for (args, expected) in cases {
        let output = server.herald(args);
        assert!(!output.status.success(), "{args:?} should fail");
        let stderr = text(&output.stderr);
        assert!(stderr.starts_with(expected), "{args:?}: {stderr}");
    }
    let mut command = Command::new(HERALD);
    command.args(["log", "-s", "X", "t", "--server", "http://nowhere"]);
    let output = run_bounded(command);
    assert!(text(&output.stderr).contains(
        "bad server URL `http://nowhere`: scheme `http` is not herald:// or herald+tls://"
    ));
}

#[test]
fn check_config_accepts_good_files_and_names_bad_keys_and_values() {
    let check = |file: &str, env: &[(&str, &str)]| {
        let mut command = Command::new(HERALD);
        command
            .args(["serve", "--check-config", "--config"])
            .arg(fixture(file));
        for (key, value) in env {
            command.env(key, value);
        }
        run_bounded(command)
    };
    let good = check("good.toml", &[]);
    assert!(good.status.success(), "{}", text(&good.stderr));
    let shown = text(&good.stdout);
    assert!(shown.starts_with("configuration OK"), "{shown}");
    assert!(
        shown.contains("127.0.0.1:7499")
            && shown.contains("127.0.0.1:7489")
            && shown.contains("\"telescope\""),
        "{shown}"
    );

    let env_wins = check("good.toml", &[("HERALD_LISTEN", "127.0.0.1:7500")]);
    assert!(text(&env_wins.stdout).contains("127.0.0.1:7500"));

    let unknown = check("unknown_key.toml", &[]);
    assert!(!unknown.status.success());
    let message = text(&unknown.stderr);
    assert!(
        message.starts_with("error: unknown setting `queue_recrods` (from config file "),
        "{message}"
    );
    assert!(
        message.contains("known settings: name, listen,"),
        "{message}"
    );

    let bad = check("bad_value.toml", &[]);
    assert_eq!(
        text(&bad.stderr).trim(),
        format!(
            "error: bad value for `heartbeat_timeout` (from config file {}): bad duration \
             `soon` (expected e.g. `500ms`, `2s`, `1m`, `1h`)",
            fixture("bad_value.toml").display()
        )
    );
}

#[test]
fn check_config_reads_the_identities_and_tls_files_as_serve_would() {
    let dir = herald_testkit::temp_dir("check-config");
    let _guard = herald_testkit::TempDirGuard(dir.clone());
    let check = |args: &[&str], env: &[(&str, &str)]| {
        let mut command = Command::new(HERALD);
        command
            .args(["serve", "--check-config", "--config"])
            .arg(fixture("good.toml"))
            .arg("--data-dir")
            .arg(&dir)
            .args(args);
        for (key, value) in env {
            command.env(key, value);
        }
        run_bounded(command)
    };
    let good = check(&[], &[]);
    assert!(good.status.success(), "{}", text(&good.stderr));
    assert!(
        text(&good.stdout).contains("access: no identities: every program that reaches it"),
        "{}",
        text(&good.stdout)
    );

    let open = check(&[], &[("HERALD_LISTEN", "0.0.0.0:7499")]);
    assert!(!open.status.success());
    let message = text(&open.stderr);
    assert!(
        message.starts_with(
            "error: refusing to serve the native protocol on 0.0.0.0:7499 with no identities"
        ),
        "{message}"
    );
    assert!(text(&open.stdout).is_empty(), "{}", text(&open.stdout));

    let missing = dir.join("missing.pem");
    let missing = missing.to_str().unwrap();
    let tls = check(&["--tls-cert", missing, "--tls-key", missing], &[]);
    assert!(!tls.status.success());
    let message = text(&tls.stderr);
    assert!(
        message.starts_with("error: TLS: ") && message.contains(missing),
        "{message}"
    );

    let identities = dir.join("identities.toml");
    std::fs::write(&identities, "not = [valid").unwrap();
    let bad = check(&["--identities", identities.to_str().unwrap()], &[]);
    assert!(!bad.status.success());
    let message = text(&bad.stderr);
    assert!(
        message.starts_with("error: cannot read identities: "),
        "{message}"
    );
    assert!(
        std::fs::read_dir(&dir).unwrap().count() == 1,
        "--check-config wrote in the data directory"
    );
}

#[test]
fn serve_reports_a_taken_port() {
    let server = ServeProcess::start();
    let addr = server.0.url().trim_start_matches("herald://").to_string();
    let mut command = Command::new(HERALD);
    command.args(["serve", "--listen", &addr]);
    let output = run_bounded(command);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains(&format!("cannot listen on {addr}")),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn information_objects_from_the_command_line() {
    let server = ServeProcess::start();
    let declared = server.herald(&[
        "declare",
        "RunInfo",
        "run:u32:run number",
        "partition:string",
        "--description",
        "the run",
    ]);
    assert!(declared.status.success(), "{}", text(&declared.stderr));
    let set = server.herald(&[
        "set",
        "RunParams.RunInfo",
        "RunInfo",
        "run=42",
        "partition=ATLAS",
    ]);
    assert!(set.status.success(), "{}", text(&set.stderr));
    assert_eq!(text(&set.stdout).trim(), "RunParams.RunInfo version 1");
    let update = server.herald(&["set", "RunParams.RunInfo", "run=43"]);
    assert_eq!(text(&update.stdout).trim(), "RunParams.RunInfo version 2");

    let json: serde_json::Value = serde_json::from_slice(
        &server
            .herald(&["get", "RunParams.RunInfo", "--json"])
            .stdout,
    )
    .expect("JSON");
    assert_eq!(json["attributes"]["run"], 43);
    assert_eq!(json["attributes"]["partition"], "ATLAS");
    assert_eq!(json["version"], 2);
    let xml = text(&server.herald(&["get", "RunParams.RunInfo", "--xml"]).stdout);
    assert!(
        xml.contains("<attr name=\"run\" descr=\"run number\" type=\"u32\"><v>43</v></attr>"),
        "{xml}"
    );
    let listed = text(
        &server
            .herald(&["ls", "RunParams\\..*", "--type", "RunInfo+"])
            .stdout,
    );
    assert!(listed.starts_with("RunParams.RunInfo"), "{listed}");
    let types = text(&server.herald(&["types"]).stdout);
    assert!(
        types.contains("RunInfo") && types.contains("run number"),
        "{types}"
    );

    let wrong = server.herald(&["set", "RunParams.RunInfo", "run=-1"]);
    assert!(!wrong.status.success());
    assert!(
        text(&wrong.stderr).contains("-1"),
        "{}",
        text(&wrong.stderr)
    );
    let missing = server.herald(&["get", "RunParams.Nothing"]);
    assert_eq!(
        text(&missing.stderr).trim(),
        "error: no information object `RunParams.Nothing`"
    );
}

#[test]
fn a_second_server_on_the_same_data_directory_refuses_and_names_the_lock_holder() {
    let data_dir = herald_testkit::temp_dir("lock");
    let _removed_when_passed = herald_testkit::TempDirGuard(data_dir.clone());
    let first = herald_testkit::ServeProcess::start_in(HERALD, &data_dir, &[], &[]);
    let mut second = Command::new(HERALD);
    second
        .args(["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
        .arg("--data-dir")
        .arg(&data_dir)
        .env_remove("HERALD_SERVER");
    let output = run_bounded(second);
    assert!(!output.status.success());
    let message = text(&output.stderr);
    let lock = data_dir.join("herald.lock");
    assert!(
        message.contains(&format!(
            "is in use by another herald server (pid {}): it holds the lock {}",
            first.id(),
            lock.display()
        )),
        "{message}"
    );
    drop(first);
    // The lock went with the process (however it ended): the directory is free again.
    let again = herald_testkit::ServeProcess::start_in(HERALD, &data_dir, &[], &[]);
    drop(again);
}

#[test]
fn an_unknown_herald_variable_is_a_warning_not_a_refusal() {
    let mut check = Command::new(HERALD);
    check
        .args(["serve", "--check-config"])
        .env("HERALD_LISTN", "127.0.0.1:1")
        .env("HERALD_BIN", "/usr/bin/true");
    let output = run_bounded(check);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let warnings = text(&output.stderr);
    assert!(
        warnings.contains(
            "warning: ignoring environment variable HERALD_LISTN: `listn` is not a setting (did \
             you mean `listen`?)"
        ),
        "{warnings}"
    );
    assert!(
        warnings.contains("ignoring environment variable HERALD_BIN"),
        "{warnings}"
    );
    assert!(text(&output.stdout).starts_with("configuration OK"));
    // And a real server starts with them set.
    let server = herald_testkit::ServeProcess::start_with_env(HERALD, &[], &[("HERALD_BIN", "x")]);
    drop(server);
}

/// `herald bench syslog` on its own server: every transport's messages are counted as
/// records (TCP's all of them; UDP's the kernel may drop under load, so only some), the
/// same count is published natively, and the server's CPU time is given for each.
#[test]
fn bench_syslog_runs_every_transport_beside_native_publish() {
    let output = run_bounded({
        let mut command = Command::new(HERALD);
        command.args(["bench", "syslog", "-n", "3000", "--json"]);
        command
    });
    assert!(output.status.success(), "{}", text(&output.stderr));
    let report: serde_json::Value =
        serde_json::from_str(text(&output.stdout).trim()).expect("one JSON object");
    let results = &report["results"];
    for transport in ["udp", "udp-single", "tcp", "tcp-3164"] {
        let result = &results[transport];
        let taken = result["taken"].as_u64().expect("taken");
        if transport.starts_with("tcp") {
            assert_eq!(taken, 3000, "{transport}: {result}");
        } else {
            assert!(taken > 0, "{transport}: {result}");
        }
        assert_eq!(result["bad"], 0, "{transport}: {result}");
        let cpu = result["server_cpu_per_million"].as_f64();
        assert!(cpu.is_some_and(|s| s >= 0.0), "{transport}: {result}");
    }
    assert!(results["native"]["rate"].as_f64().is_some_and(|r| r > 0.0));
}
