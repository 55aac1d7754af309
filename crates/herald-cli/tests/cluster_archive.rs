//! Archive queries across a cluster of real `herald serve` processes with embedded archives:
//! each member archives what its own producers sent, and a query on any member asks the
//! others and merges the answers by time, page after page, each record once.

use std::time::Duration;

use herald_client::Client;
use herald_proto::archive::{ArchiveReply, ArchiveRequest, AtQuery, LogQuery};
use herald_proto::info::{AttributeData, TypeData, UpdateMode};
use herald_proto::time::now_nanos;
use herald_proto::{AckLevel, Kind, PrioritySet, Record, Value};
use herald_testkit::ServeProcess;

mod cluster_kit;

const WAIT: Duration = Duration::from_secs(10);

fn member(name: &str, seed: Option<&ServeProcess>) -> ServeProcess {
    cluster_kit::member(name, seed, &[], &[])
}

/// Publishes `count` log records `<from> <n>` about `T.<from>`, the last one waiting until
/// it is stored (and, the archive keeping order, every one before it).
async fn publish(client: &Client, from: &str, count: usize) {
    for n in 0..count {
        let record = Record {
            text: format!("{from} {n}"),
            ..Record::new(Kind::Log, format!("T.{from}"))
        };
        if n + 1 == count {
            client
                .sync_send(&record, AckLevel::Stored, WAIT)
                .await
                .unwrap();
        } else {
            client.publish(&record).await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_on_any_member_merges_every_members_archive_by_time() {
    let a = member("a", None);
    let b = member("b", Some(&a));
    let (on_a, on_b) = (
        Client::connect(&a.url()).await.unwrap(),
        Client::connect(&b.url()).await.unwrap(),
    );
    let deadline = tokio::time::Instant::now() + WAIT;
    while !on_a
        .monitor()
        .await
        .unwrap()
        .iter()
        .any(|(k, v)| k == "cluster" && format!("{v:?}").contains("up\", Bool(true)"))
    {
        assert!(tokio::time::Instant::now() < deadline, "the route");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let from = now_nanos();
    // Interleaved in time: a, then b, then a again.
    publish(&on_a, "a", 300).await;
    publish(&on_b, "b", 300).await;
    publish(&on_a, "c", 300).await;

    for (client, at) in [(&on_a, "a"), (&on_b, "b")] {
        let mut pages = client.log_pages(LogQuery {
            from,
            to: now_nanos() + 1,
            priorities: PrioritySet::ALL,
            limit: 128,
            ..LogQuery::default()
        });
        let mut texts = Vec::new();
        let mut times = Vec::new();
        while let Some(page) = pages.next_page().await.unwrap() {
            for stored in &page.records {
                let record = stored.decode().unwrap();
                texts.push(record.text);
                times.push(record.time);
            }
        }
        assert_eq!(
            texts.len(),
            900,
            "on {at}: every member's records, each once"
        );
        let mut unique = texts.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), 900, "on {at}: none twice");
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]),
            "on {at}: in time order"
        );
        assert_eq!(texts[0], "a 0");
        assert_eq!(texts[300], "b 0");
        assert_eq!(texts[899], "c 299");
    }
    // The value of an object at an instant is found in the archive of the member that has
    // it (an object in no namespace is its member's own).
    let counter = TypeData {
        name: "Counter".into(),
        base: None,
        description: String::new(),
        attributes: vec![AttributeData {
            name: "n".into(),
            attr_type: "u32".into(),
            description: String::new(),
        }],
    };
    on_b.declare_type(counter).await.unwrap();
    for n in 1..=3 {
        let fields = vec![("n".to_string(), Value::Int(n))];
        on_b.set_info("T.counter", Some("Counter"), fields, UpdateMode::Upsert)
            .await
            .unwrap();
    }
    let last = Record {
        text: "flush".into(),
        ..Record::new(Kind::Log, "T.flush")
    };
    on_b.sync_send(&last, AckLevel::Stored, WAIT).await.unwrap();
    assert_eq!(
        on_a.get_info("T.counter").await.unwrap(),
        None,
        "b's own object"
    );
    let reply = on_a
        .query(ArchiveRequest::At(AtQuery {
            names: vec!["T.counter".into()],
            time: now_nanos(),
        }))
        .await
        .unwrap();
    let ArchiveReply::At(values) = reply else {
        panic!("expected values at an instant");
    };
    let latest = values[0]
        .as_ref()
        .expect("the object's change, from b's archive");
    assert_eq!(latest.decode().unwrap().id, Some(3), "its last version");
}
