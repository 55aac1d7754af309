//! `GET /archive/*`: JSON pages with a cursor, NDJSON and CSV streams, buckets, values at an
//! instant, and the errors of bad queries — over real loopback connections.

use herald_client::Client;
use herald_proto::{AckLevel, Kind, Priority, Record, Value};
use herald_testkit::TestServer;

use super::{get, WAIT};

/// 2026-11-20T02:00:00Z in ns.
const NIGHT: i64 = 1_795_140_000_000_000_000;
const SECOND: i64 = 1_000_000_000;

/// Stores (acknowledged as `stored`) 5 samples of `Beam.Current` a second apart and two
/// mount logs.
async fn archived() -> (TestServer, Client) {
    let server = TestServer::start().await;
    let client = Client::connect(&server.url()).await.unwrap();
    for i in 0..5 {
        let sample = Record {
            time: NIGHT + i * SECOND,
            fields: vec![("value".into(), Value::Float(i as f64))],
            ..Record::new(Kind::Info, "Beam.Current")
        };
        client
            .sync_send(&sample, AckLevel::Stored, WAIT)
            .await
            .unwrap();
    }
    for (i, (priority, text)) in [(Priority::Error, "axis, stuck"), (Priority::Info, "fine")]
        .into_iter()
        .enumerate()
    {
        let log = Record {
            time: NIGHT + i as i64 * SECOND,
            priority,
            text: text.into(),
            ..Record::new(Kind::Log, "ANTENNA.DV01.Mount")
        };
        client
            .sync_send(&log, AckLevel::Stored, WAIT)
            .await
            .unwrap();
    }
    (server, client)
}

const RANGE: &str = "from=2026-11-20T02:00&to=2026-11-20T03:00";

#[tokio::test]
async fn samples_page_with_a_cursor_in_json_and_stream_in_ndjson_and_csv() {
    let (server, _client) = archived().await;
    let first = get(
        &server,
        &format!("/archive/samples/Beam.Current?{RANGE}&limit=3"),
    )
    .await;
    assert_eq!(first.status, 200, "{}", first.body);
    let page = first.json();
    assert_eq!(page["records"].as_array().unwrap().len(), 3);
    assert_eq!(page["records"][0]["fields"]["value"], 0.0);
    let next = page["next"].as_str().expect("a cursor");
    let rest = get(
        &server,
        &format!("/archive/samples/Beam.Current?{RANGE}&after={next}"),
    )
    .await;
    let rest = rest.json();
    assert_eq!(rest["records"].as_array().unwrap().len(), 2);
    assert_eq!(rest["next"], serde_json::Value::Null);

    let ndjson = get(
        &server,
        &format!("/archive/samples/Beam.Current?{RANGE}&format=ndjson&limit=2"),
    )
    .await;
    assert_eq!(ndjson.header("content-type"), Some("application/x-ndjson"));
    assert_eq!(
        ndjson.body.lines().count(),
        5,
        "every page streamed: {}",
        ndjson.body
    );
    let csv = get(
        &server,
        &format!("/archive/samples/Beam.Current?{RANGE}&format=csv"),
    )
    .await;
    let lines: Vec<&str> = csv.body.lines().collect();
    assert_eq!(lines[0], "time,time_ns,seq,name,field,value");
    assert_eq!(lines.len(), 6);
    assert!(
        lines[1].starts_with("2026-11-20T02:00:00.000Z,"),
        "{}",
        lines[1]
    );
    server.stop().await;
}

#[tokio::test]
async fn buckets_logs_and_values_at_an_instant() {
    let (server, _client) = archived().await;
    let buckets = get(
        &server,
        &format!("/archive/samples/Beam.Current?{RANGE}&buckets=1"),
    )
    .await;
    let stats = &buckets.json()["buckets"][0];
    assert_eq!(stats["count"], 5);
    assert_eq!(stats["fields"]["value"]["mean"], 2.0);

    let logs = get(
        &server,
        &format!("/archive/logs?{RANGE}&priority=%3E%3DERROR&subject=ANTENNA.*&format=csv"),
    )
    .await;
    let lines: Vec<&str> = logs.body.lines().collect();
    assert_eq!(lines.len(), 2, "{}", logs.body);
    assert!(
        lines[1].ends_with(",ERROR,ANTENNA.DV01.Mount,,,\"axis, stuck\""),
        "{}",
        lines[1]
    );

    let at = get(
        &server,
        "/archive/at?names=Beam.Current,Beam.None&time=2026-11-20T02:00:02.5Z",
    )
    .await;
    let at = at.json();
    assert_eq!(at[0]["record"]["fields"]["value"], 2.0);
    assert_eq!(at[1]["record"], serde_json::Value::Null);
    let csv = get(
        &server,
        "/archive/at?names=Beam.Current,Beam.None&time=2026-11-20T02:00:02.5Z&format=csv",
    )
    .await;
    assert_eq!(csv.header("content-type"), Some("text/csv"));
    assert_eq!(
        csv.body.lines().count(),
        2,
        "a header and Beam.Current's line: {}",
        csv.body
    );
    server.stop().await;
}

#[tokio::test]
async fn bad_queries_are_named() {
    let (server, _client) = archived().await;
    for (target, words) in [
        ("/archive/logs?from=-1h&to=-2h", "empty time range"),
        ("/archive/logs?from=yesterday", "bad time `yesterday`"),
        ("/archive/logs?frm=-1h", "unknown field `frm`"),
        ("/archive/logs?priority=LOUD", "`priority`"),
        ("/archive/samples/A.b?format=xml", "unknown format `xml`"),
        (
            "/archive/samples/A.b?after=nonsense",
            "bad cursor `nonsense`",
        ),
        ("/archive/at?names=", "comma-separated `names`"),
        // Another route's parameter would be a filter the caller believes applied.
        (
            "/archive/logs?buckets=2",
            "`buckets` does not apply to /archive/logs",
        ),
        (
            "/archive/at?names=A.b&from=-1h",
            "`from` does not apply to /archive/at",
        ),
        ("/archive/samples/A.b?field=x", "`field` applies to buckets"),
    ] {
        let answer = get(&server, target).await;
        assert_eq!(answer.status, 400, "{target}: {}", answer.body);
        let body = answer.json();
        assert_eq!(body["code"], "bad_query", "{target}");
        assert!(
            body["error"].as_str().unwrap().contains(words),
            "{target}: {}",
            answer.body
        );
    }
    server.stop().await;
}
