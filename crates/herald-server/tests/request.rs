//! Request/reply, subscribe-and-get and acknowledged sends through the real server.

mod common;

use std::time::Duration;

use common::{connect, int, log, ms, take_records, texts, wait_until, WAIT};
use herald_client::{Client, ClientError};
use herald_proto::{AckLevel, ErrorCode, Filter, Kind, Priority, Record};
use herald_testkit::TestServer;
use tokio::task::JoinHandle;

fn command(text: &str) -> Record {
    Record {
        type_name: "command".into(),
        text: text.to_string(),
        ..Record::new(Kind::Message, "runcontrol.cmd")
    }
}

/// Subscribes `responder` to `runcontrol.cmd` and answers every request with
/// `done: <request text>` from a task of its own.
async fn spawn_responder(responder: Client) -> JoinHandle<()> {
    let mut requests = responder
        .subscribe(Filter::subject("runcontrol.cmd").unwrap())
        .await
        .unwrap();
    tokio::spawn(async move {
        while let Some(request) = requests.next_record().await {
            let request = request.into_record();
            let reply = Record {
                text: format!("done: {}", request.text),
                ..Record::new(Kind::Message, "unused.subject")
            };
            responder.reply(&request, reply).await.unwrap();
        }
    })
}

#[tokio::test]
async fn a_request_gets_the_reply_of_the_responder() {
    let server = TestServer::start().await;
    let responder = spawn_responder(connect(&server, "responder").await).await;
    let requester = connect(&server, "requester").await;
    let reply = requester
        .request(command("start run 42"), WAIT)
        .await
        .unwrap();
    let record = reply.record();
    assert_eq!(record.text, "done: start run 42");
    assert_eq!(record.kind, Kind::Message);
    assert!(
        record.subject.starts_with("_INBOX."),
        "the reply went to the requester's inbox: {}",
        record.subject
    );
    assert!(record.id.is_some(), "the reply carries the request's id");
    responder.abort();
    server.stop().await;
}

#[tokio::test]
async fn concurrent_requests_each_get_their_own_reply() {
    let server = TestServer::start().await;
    let responder = spawn_responder(connect(&server, "responder").await).await;
    let requester = connect(&server, "requester").await;
    let requests = (0..20).map(|n| {
        let requester = requester.clone();
        tokio::spawn(async move {
            let text = format!("start run {n}");
            let reply = requester.request(command(&text), WAIT).await.unwrap();
            (text, reply.record().text.clone())
        })
    });
    let mut answered = 0;
    for request in requests.collect::<Vec<_>>() {
        let (text, reply) = request.await.unwrap();
        assert_eq!(reply, format!("done: {text}"));
        answered += 1;
    }
    assert_eq!(answered, 20);
    responder.abort();
    server.stop().await;
}

#[tokio::test]
async fn a_request_nobody_answers_is_no_reply_naming_the_subject() {
    let server = TestServer::start().await;
    let requester = connect(&server, "requester").await;
    let started = tokio::time::Instant::now();
    let err = requester
        .request(command("anyone?"), ms(200))
        .await
        .unwrap_err();
    assert!(started.elapsed() >= ms(200), "waited the full timeout");
    assert_eq!(
        err,
        ClientError::NoReply {
            subject: "runcontrol.cmd".into(),
            timeout: ms(200),
        }
    );
    assert_eq!(
        err.to_string(),
        "no reply to the request on `runcontrol.cmd` within 200 ms"
    );
    assert_eq!(requester.error(), None, "a missing reply is not fatal");
    server.stop().await;
}

#[tokio::test]
async fn replying_to_a_record_without_reply_to_is_refused() {
    let server = TestServer::start().await;
    let client = connect(&server, "client").await;
    let err = client
        .reply(&command("not a request"), command("reply"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        ClientError::InvalidRecord("record on `runcontrol.cmd` has no reply_to".into())
    );
    server.stop().await;
}

#[tokio::test]
async fn subscribe_and_get_returns_the_first_matching_record() {
    let server = TestServer::start().await;
    let getter = connect(&server, "getter").await;
    let filter = Filter::parse(Some("RunParams.*"), None, Some(">=NOTICE"), &[], None).unwrap();
    let get = tokio::spawn(async move { getter.subscribe_and_get(filter, WAIT).await });
    wait_until("the getter has subscribed", || {
        common::server_int(&server, "subscriptions") == 1
    })
    .await;
    let publisher = connect(&server, "publisher").await;
    for record in [
        log("RunParams.RunInfo", Priority::Info, "too low"),
        log("Other.RunInfo", Priority::Error, "other subject"),
        log("RunParams.RunInfo", Priority::Warning, "first match"),
        log("RunParams.RunInfo", Priority::Error, "second match"),
    ] {
        publisher.publish(&record).await.unwrap();
    }
    let delivered = get.await.unwrap().unwrap();
    assert_eq!(delivered.record().text, "first match");
    assert_eq!(delivered.priority(), Priority::Warning);
    wait_until("the getter's subscription is gone", || {
        common::server_int(&server, "subscriptions") == 0
    })
    .await;
    server.stop().await;
}

#[tokio::test]
async fn subscribe_and_get_times_out_when_nothing_matches() {
    let server = TestServer::start().await;
    let getter = connect(&server, "getter").await;
    let publisher = connect(&server, "publisher").await;
    let publishing = tokio::spawn(async move {
        for n in 0..20 {
            let record = log("RunParams.RunInfo", Priority::Info, &format!("{n}"));
            publisher.publish(&record).await.unwrap();
            tokio::time::sleep(ms(10)).await;
        }
    });
    let filter = Filter::parse(Some("RunParams.*"), None, Some(">=ERROR"), &[], None).unwrap();
    let err = getter.subscribe_and_get(filter, ms(300)).await.unwrap_err();
    assert_eq!(err, ClientError::Timeout(ms(300)));
    assert_eq!(err.to_string(), "no answer within 300 ms");
    assert_eq!(getter.error(), None);
    publishing.await.unwrap();
    server.stop().await;
}

#[tokio::test]
async fn sync_send_received_is_acknowledged_with_the_count() {
    let server = TestServer::start().await;
    let subscriber = connect(&server, "subscriber").await;
    let mut subscription = subscriber
        .subscribe(Filter::subject("sync.*").unwrap())
        .await
        .unwrap();
    let sender = connect(&server, "sender").await;
    sender
        .publish(&log("sync.before", Priority::Info, "flushed"))
        .await
        .unwrap();
    // Flushed first: a record still in the open batch would be sealed into the acknowledged
    // PUBLISH frame and counted in the ACK too.
    sender.flush(WAIT).await.unwrap();
    let ack = sender
        .sync_send(
            &log("sync.now", Priority::Info, "acknowledged"),
            AckLevel::Received,
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!(ack.level, AckLevel::Received);
    assert_eq!(ack.count, 1);
    assert_ne!(ack.ack_id, 0);
    assert_eq!(
        common::server_int(&server, "records_in"),
        2,
        "the ACK came after the record was routed"
    );
    assert_eq!(
        texts(&take_records(&subscriber, &mut subscription).await),
        ["flushed", "acknowledged"]
    );
    server.stop().await;
}

#[tokio::test]
async fn sync_send_stored_of_a_record_no_rule_keeps_is_refused_and_the_connection_stays() {
    let server = TestServer::start().await;
    let subscriber = connect(&server, "subscriber").await;
    let mut subscription = subscriber
        .subscribe(Filter::subject("sync.*").unwrap())
        .await
        .unwrap();
    let sender = connect(&server, "sender").await;
    // The default rules keep logs from INFO up and info changes; not DEBUG logs.
    let err = sender
        .sync_send(
            &log("sync.stored", Priority::Debug, "wants storage"),
            AckLevel::Stored,
            WAIT,
        )
        .await
        .unwrap_err();
    let expected = "acknowledgement level `stored` for a record about `sync.stored`, which no \
                    archive rule keeps; add a rule for it ([[archive.rules]]) or send it as \
                    `received`; nothing was routed";
    assert_eq!(
        err,
        ClientError::Server {
            code: ErrorCode::Archive,
            message: expected.into(),
        }
    );
    assert_eq!(sender.error(), None, "a refused level closes nothing");
    let ack = sender
        .sync_send(
            &log("sync.received", Priority::Info, "then stored"),
            AckLevel::Stored,
            WAIT,
        )
        .await
        .unwrap();
    assert_eq!((ack.count, ack.level), (1, AckLevel::Stored));
    assert_eq!(
        texts(&take_records(&subscriber, &mut subscription).await),
        ["then stored"],
        "the refused record was not routed, as the message says"
    );
    let snapshot = server.monitor().snapshot();
    assert_eq!(int(&snapshot, "records_in"), 1);
    assert_eq!(int(&snapshot, "rejected_frames"), 0);
    server.stop().await;
}

#[tokio::test]
async fn flush_waits_for_everything_published_before_it() {
    let server = TestServer::start().await;
    let publisher = connect(&server, "publisher").await;
    for n in 0..1000 {
        let record = log("flush.test", Priority::Debug, &format!("{n}"));
        publisher.publish(&record).await.unwrap();
    }
    tokio::time::timeout(Duration::from_secs(10), publisher.flush(WAIT))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(common::server_int(&server, "records_in"), 1000);
    server.stop().await;
}
