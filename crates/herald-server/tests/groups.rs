//! Queue groups through the real server: members of a group share the records they match,
//! each record once, while a subscriber outside the group gets every record; the monitor
//! names each subscription's group; a bad group name is refused by name.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{connect, log, WAIT};
use herald_client::{ClientError, Event, Subscription};
use herald_proto::{DeliveryOptions, Filter, Kind, Priority, Record};
use herald_testkit::TestServer;

const RECORDS: u64 = 20_000;

/// Reads `subscription` until nothing comes for `quiet`; returns the sequence numbers.
async fn read_all(mut subscription: Subscription, quiet: Duration) -> Vec<u64> {
    let mut seqs = Vec::new();
    while let Ok(Some(event)) = tokio::time::timeout(quiet, subscription.next()).await {
        match event {
            Event::Record(delivered) => seqs.push(delivered.seq),
            other => panic!("no loss expected: {other:?}"),
        }
    }
    seqs
}

fn grouped(name: &str) -> DeliveryOptions {
    DeliveryOptions {
        group: Some(Arc::from(name)),
        ..DeliveryOptions::default()
    }
}

#[tokio::test]
async fn a_group_of_three_shares_every_record_exactly_once_under_load() {
    let server = TestServer::start().await;
    let mut readers = Vec::new();
    let mut clients = Vec::new();
    for n in 0..3 {
        let client = connect(&server, &format!("worker-{n}")).await;
        let subscription = client
            .subscribe_with_options(Filter::subject("job.*").unwrap(), grouped("workers"))
            .await
            .unwrap();
        readers.push(tokio::spawn(read_all(subscription, Duration::from_secs(2))));
        clients.push(client);
    }
    let watcher = connect(&server, "watcher").await;
    let everything = watcher
        .subscribe(Filter::subject("job.*").unwrap())
        .await
        .unwrap();
    let watching = tokio::spawn(read_all(everything, Duration::from_secs(2)));

    let monitor = watcher.monitor().await.unwrap();
    let text = format!("{monitor:?}");
    assert!(
        text.contains("group=workers"),
        "the monitor names the group: {text}"
    );

    let publisher = connect(&server, "publisher").await;
    for i in 0..RECORDS {
        // Every text its own: identical records would collapse as a log storm.
        let record = log("job.x", Priority::Info, &format!("job {i}"));
        publisher.publish(&record).await.unwrap();
    }
    publisher.flush(WAIT).await.unwrap();

    let mut seen = HashSet::new();
    let mut shares = Vec::new();
    for reader in readers {
        let seqs = reader.await.unwrap();
        shares.push(seqs.len() as u64);
        for seq in seqs {
            assert!(seen.insert(seq), "record {seq} reached two members");
        }
    }
    assert_eq!(
        seen.len() as u64,
        RECORDS,
        "every record reached one member: {shares:?}"
    );
    assert!(
        shares.iter().all(|n| *n >= RECORDS / 10),
        "members share the load: {shares:?}"
    );
    let all: HashSet<u64> = watching.await.unwrap().into_iter().collect();
    assert_eq!(all, seen, "a subscriber outside the group got every record");
}

#[tokio::test]
async fn responders_in_a_group_answer_each_request_once() {
    let server = TestServer::start().await;
    let answered = Arc::new(AtomicU64::new(0));
    let mut counts = Vec::new();
    let mut responders = Vec::new();
    for n in 0..2 {
        let responder = connect(&server, &format!("responder-{n}")).await;
        let mut requests = responder
            .subscribe_with_options(Filter::subject("svc.add").unwrap(), grouped("responders"))
            .await
            .unwrap();
        let (mine, all) = (Arc::new(AtomicU64::new(0)), Arc::clone(&answered));
        counts.push(Arc::clone(&mine));
        responders.push(tokio::spawn(async move {
            while let Some(request) = requests.next_record().await {
                let request = request.into_record();
                mine.fetch_add(1, Ordering::Relaxed);
                all.fetch_add(1, Ordering::Relaxed);
                let reply = Record::new(Kind::Message, "unused.subject");
                responder.reply(&request, reply).await.unwrap();
            }
        }));
    }
    let requester = connect(&server, "requester").await;
    for _ in 0..20 {
        let request = Record::new(Kind::Message, "svc.add");
        requester.request(request, WAIT).await.unwrap();
    }
    // A second answer would come after the first: give it the time to.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        answered.load(Ordering::Relaxed),
        20,
        "each request answered once"
    );
    let shares: Vec<u64> = counts.iter().map(|c| c.load(Ordering::Relaxed)).collect();
    assert!(
        shares.iter().all(|n| *n > 0),
        "both responders answer: {shares:?}"
    );
    responders.iter().for_each(|r| r.abort());
    server.stop().await;
}

#[tokio::test]
async fn a_bad_group_name_is_refused_by_name() {
    let server = TestServer::start().await;
    let client = connect(&server, "bad").await;
    let err = client
        .subscribe_with_options(Filter::subject("job.*").unwrap(), grouped(""))
        .await
        .unwrap_err();
    let ClientError::Server { message, .. } = &err else {
        panic!("a server error: {err:?}");
    };
    assert!(
        message.contains("group") && message.contains("needs a name"),
        "{message}"
    );
}
