//! ACS logging XML through a real `herald serve`: `herald import --format acs-xml` sends a
//! file's entries, `herald query --format acs-xml` and `GET /archive/logs?format=acs-xml`
//! give them back as entries that read as the same records, `herald tail --format acs-xml`
//! writes them as they arrive, and a malformed file is refused with its line and column.

use std::process::Command;
use std::time::Duration;

use herald_info::acs_xml;
use herald_proto::{Priority, Record};
use herald_testkit::{temp_dir, ServeProcess};

const HERALD: &str = env!("CARGO_BIN_EXE_herald");

/// Three entries as ACS writes them (2026-11-20, an hour the archive keeps).
const FILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<Log>
<!-- written by jlog -->
<Warning TimeStamp="2026-11-20T02:00:00.123" File="mount.cpp" Line="42" Routine="Mount::move" Host="dv01" Process="mountctl" SourceObject="ANTENNA.DV01.Mount" Thread="main" LogId="MOUNT_FAULT" Audience="operator"><![CDATA[encoder fault on <az> & el]]><Data Name="axis"><![CDATA[az]]></Data></Warning>
<Info TimeStamp="2026-11-20T02:00:01.000" Host="dv02" Process="cryo" SourceObject="ANTENNA.DV02.Cryo">stage 2 at 4.1 K</Info>
<Emergency TimeStamp="2026-11-20T02:00:02.500" SourceObject="SITE.Power">mains lost</Emergency>
</Log>
"#;

fn herald(args: &[&str], server: &ServeProcess) -> std::process::Output {
    Command::new(HERALD)
        .args(args)
        .args(["--server", &server.url()])
        .output()
        .expect("herald runs")
}

fn stdout(output: std::process::Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn import_query_and_http_round_trip_acs_xml() {
    let dir = temp_dir("acs-xml");
    let _removed_when_passed = herald_testkit::TempDirGuard(dir.clone());
    let server = ServeProcess::start_in(HERALD, &dir.join("data"), &[], &[]);
    let file = dir.join("log.xml");
    std::fs::write(&file, FILE).unwrap();
    let expected = acs_xml::parse(FILE).unwrap();
    assert_eq!(expected.len(), 3);
    assert_eq!(expected[0].text, "encoder fault on <az> & el");

    let imported = stdout(herald(
        &["import", "--format", "acs-xml", file.to_str().unwrap()],
        &server,
    ));
    assert!(imported.contains("imported 3 records"), "{imported}");

    let range = [
        "--from",
        "2026-11-20T01:00:00Z",
        "--to",
        "2026-11-20T03:00:00Z",
    ];
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    let queried = loop {
        let mut args = vec!["query", "--logs", "--format", "acs-xml"];
        args.extend(range);
        let text = stdout(herald(&args, &server));
        let records = acs_xml::parse(&text).unwrap_or_else(|err| panic!("{err}\n{text}"));
        if records.len() == 3 || std::time::Instant::now() > deadline {
            assert!(text.starts_with("<?xml"), "{text}");
            break records;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(comparable(&queried), comparable(&expected));

    let target = "/archive/logs?from=2026-11-20T01:00:00Z&to=2026-11-20T03:00:00Z&format=acs-xml";
    let addr = server
        .http_url()
        .trim_start_matches("http://")
        .parse()
        .expect("the server's HTTP address");
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let response = runtime.block_on(herald_testkit::http::request(addr, "GET", target, None));
    assert_eq!(response.status, 200, "{}", response.body);
    assert_eq!(
        response.header("content-type"),
        Some("application/xml; charset=utf-8")
    );
    let body = response.body;
    let over_http = acs_xml::parse(&body).unwrap_or_else(|err| panic!("{err}\n{body}"));
    assert_eq!(comparable(&over_http), comparable(&expected));
    let emergency = over_http
        .iter()
        .find(|r| r.priority == Priority::Emergency)
        .unwrap();
    assert_eq!(emergency.subject, "SITE.Power");
}

#[test]
fn a_malformed_file_is_refused_with_its_line_and_column_and_nothing_is_sent() {
    let dir = temp_dir("acs-xml-bad");
    let _removed_when_passed = herald_testkit::TempDirGuard(dir.clone());
    let server = ServeProcess::start_in(HERALD, &dir.join("data"), &[], &[]);
    let file = dir.join("bad.xml");
    let bad = FILE.replace("<Emergency TimeStamp", "<Emergency Stamp");
    std::fs::write(&file, bad).unwrap();
    let output = herald(
        &["import", "--format", "acs-xml", file.to_str().unwrap()],
        &server,
    );
    assert!(!output.status.success());
    let err = String::from_utf8_lossy(&output.stderr);
    assert!(
        err.contains(
            "bad.xml: line 6, column 12: <Emergency> has no attribute Stamp; nothing was imported"
        ),
        "{err}"
    );
    let monitor = stdout(herald(&["monitor", "--json"], &server));
    assert!(monitor.contains("\"records_in\":0"), "{monitor}");
}

/// What survives the trip (ACS keeps milliseconds and has no record type or kind), as text.
fn comparable(records: &[Record]) -> Vec<String> {
    let mut out: Vec<(i64, String)> = records
        .iter()
        .map(|r| {
            let row = format!(
                "{} {:?} {} {:?} {:?} {:?} {:?}",
                r.time, r.priority, r.subject, r.text, r.origin, r.audience, r.fields
            );
            (r.time, row)
        })
        .collect();
    out.sort();
    out.into_iter().map(|(_, row)| row).collect()
}

#[test]
fn tail_writes_entries_as_they_arrive() {
    let dir = temp_dir("acs-xml-tail");
    let _removed_when_passed = herald_testkit::TempDirGuard(dir.clone());
    let server = ServeProcess::start_in(HERALD, &dir.join("data"), &[], &[]);
    let tail = Command::new(HERALD)
        .args([
            "tail",
            "--format",
            "acs-xml",
            "-n",
            "3",
            "--idle-timeout",
            "10",
        ])
        .args(["--server", &server.url()])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("herald tail runs");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while !stdout(herald(&["monitor", "--json"], &server)).contains("\"subscriptions\":1") {
        assert!(
            std::time::Instant::now() < deadline,
            "tail never subscribed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let file = dir.join("log.xml");
    std::fs::write(&file, FILE).unwrap();
    stdout(herald(
        &["import", "--format", "acs-xml", file.to_str().unwrap()],
        &server,
    ));
    let output = tail.wait_with_output().unwrap();
    let text = String::from_utf8(output.stdout).unwrap();
    assert_eq!(text.lines().count(), 3, "one entry per line: {text}");
    let records = acs_xml::parse(&text).unwrap_or_else(|err| panic!("{err}\n{text}"));
    assert_eq!(
        comparable(&records),
        comparable(&acs_xml::parse(FILE).unwrap())
    );
}
