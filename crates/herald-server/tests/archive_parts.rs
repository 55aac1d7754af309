//! Archive answers larger than a frame: buckets and values at an instant come in several
//! `QUERY_REPLY` parts under one cid, none over the frame limit the client was told, and the
//! clients join them; over HTTP such an answer is streamed and reads as one. A page stops
//! before the record that would take it over the limit.

mod common;

use common::{int, map, WAIT};
use herald_client::Client;
use herald_proto::archive::{ArchiveReply, ArchiveRequest, AtQuery, BucketQuery};
use herald_proto::{Frame, Kind, Record, Value};
use herald_testkit::{RawConnection, TestServer};

const SECOND: i64 = 1_000_000_000;
/// 2026-11-20T02:00:00Z.
const NIGHT: i64 = 1_795_140_000 * SECOND;
const MAX_FRAME_BYTES: u32 = 16 * 1024;
/// Numeric fields per sample: one bucket of them is about 2 KB on the wire.
const FIELDS: i64 = 60;

fn wide(name: &str, time: i64, value: i64) -> Record {
    Record {
        time,
        fields: (0..FIELDS)
            .map(|f| (format!("field{f:02}"), Value::Int(value * f)))
            .collect(),
        ..Record::new(Kind::Info, name)
    }
}

async fn written(client: &Client) -> i64 {
    int(map(&client.monitor().await.unwrap(), "archive"), "written")
}

/// A server with a small frame limit, holding `samples` wide samples of `Wide.Signal` one
/// second apart, and one sample of each of `Wide.N0` … `Wide.N{names - 1}`.
async fn server_with(samples: i64, names: usize) -> (TestServer, Client) {
    let server = TestServer::start_with(herald_server::Config {
        max_frame_bytes: MAX_FRAME_BYTES,
        ..herald_server::Config::default()
    })
    .await;
    let client = Client::connect(&format!("{}?name=parts", server.url()))
        .await
        .unwrap();
    for i in 0..samples {
        let record = wide("Wide.Signal", NIGHT + i * SECOND, i);
        client.publish(&record).await.unwrap();
    }
    for n in 0..names {
        client
            .publish(&wide(&format!("Wide.N{n}"), NIGHT, n as i64))
            .await
            .unwrap();
    }
    client.flush(WAIT).await.unwrap();
    let expected = samples + names as i64;
    let deadline = tokio::time::Instant::now() + WAIT;
    while written(&client).await < expected {
        assert!(tokio::time::Instant::now() < deadline, "never archived");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    (server, client)
}

fn names(count: usize) -> Vec<String> {
    (0..count).map(|n| format!("Wide.N{n}")).collect()
}

#[tokio::test]
async fn buckets_and_values_larger_than_a_frame_arrive_whole_in_parts() {
    let (server, client) = server_with(600, 300).await;
    let query = BucketQuery {
        name: "Wide.Signal".into(),
        from: NIGHT,
        to: NIGHT + 600 * SECOND,
        buckets: 300,
        field: None,
    };
    // About 600 KB of buckets through frames of 16 KiB.
    let buckets = client.buckets(query.clone()).await.unwrap();
    assert_eq!(buckets.len(), 300);
    for (index, bucket) in buckets.iter().enumerate() {
        let i = 2 * index as i64;
        assert_eq!((bucket.start, bucket.count), (NIGHT + i * SECOND, 2));
        let last = &bucket.fields[FIELDS as usize - 1];
        let top = (FIELDS - 1) as f64;
        assert_eq!((last.min, last.max), (i as f64 * top, (i + 1) as f64 * top));
    }
    let values = client.values_at(&names(300), NIGHT + SECOND).await.unwrap();
    assert_eq!(values.len(), 300);
    for (n, value) in values.iter().enumerate() {
        let record = value.as_ref().expect("a value").decode().unwrap();
        assert_eq!(record, wide(&format!("Wide.N{n}"), NIGHT, n as i64));
    }
    assert!(client.error().is_none(), "the connection lived");

    // The same over the raw protocol: every part within the limit, all but the last marked.
    let mut raw = RawConnection::handshake(server.addr(), "raw").await;
    for (cid, request) in [
        (7, ArchiveRequest::Buckets(query)),
        (
            8,
            ArchiveRequest::At(AtQuery {
                names: names(300),
                time: NIGHT + SECOND,
            }),
        ),
    ] {
        raw.send(&Frame::Query { cid, request }).await;
        let mut parts = 0;
        let mut items = 0;
        loop {
            let bytes = raw.next_raw().await.unwrap().expect("a frame");
            assert!(
                bytes.len() <= MAX_FRAME_BYTES as usize,
                "{} bytes",
                bytes.len()
            );
            let frame = Frame::decode(bytes.clone()).unwrap();
            let Frame::QueryReply {
                cid: answered,
                reply,
                more,
                ..
            } = frame
            else {
                continue; // a PING
            };
            assert_eq!(answered, cid);
            parts += 1;
            items += match reply {
                ArchiveReply::Buckets(buckets) => buckets.len(),
                ArchiveReply::At(found) => found.len(),
                ArchiveReply::Page(_) => panic!("a page"),
            };
            if !more {
                break;
            }
        }
        assert!(parts > 10, "{parts} parts");
        assert_eq!(items, 300, "every bucket or value, once");
    }
    server.stop().await;
}

#[tokio::test]
async fn large_buckets_and_values_stream_over_http() {
    // About 3 MB of buckets in CSV, over the 4 MiB (estimated) of one part.
    let (server, _client) = server_with(1_500, 0).await;
    let range = "from=2026-11-20T02:00:00Z&to=2026-11-20T02:25:00Z&buckets=1500";
    for (format, check) in [
        ("json", Check::Json),
        ("ndjson", Check::Lines(1_500)),
        ("csv", Check::Lines(1 + 1_500 * FIELDS as usize)),
    ] {
        let target = format!("/archive/samples/Wide.Signal?{range}&format={format}");
        let answer = herald_testkit::http::request(server.http_addr(), "GET", &target, None).await;
        assert_eq!(answer.status, 200, "{format}: {}", answer.body);
        // Streamed: no length known up front.
        assert_eq!(
            answer.header("transfer-encoding"),
            Some("chunked"),
            "{format}"
        );
        assert_eq!(answer.header("herald-skipped"), None);
        match check {
            Check::Json => {
                let json = answer.json();
                assert_eq!(json["name"], "Wide.Signal");
                assert_eq!(json["skipped"], 0);
                assert_eq!(json["buckets"].as_array().unwrap().len(), 1_500);
                assert_eq!(json["buckets"][1_499]["count"], 1);
            }
            Check::Lines(count) => assert_eq!(answer.body.lines().count(), count, "{format}"),
        }
    }
    server.stop().await;
}

enum Check {
    Json,
    Lines(usize),
}
