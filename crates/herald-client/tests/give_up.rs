//! A client whose connection ends for good counts what it held without an acknowledgement
//! (`Client::abandoned`), and nothing while it runs.

mod common;

use std::time::{Duration, Instant};

use common::{fake_server, read_unacknowledged};

use herald_client::{Client, ClientOptions};
use herald_proto::{Kind, Record};

/// A server that says `WELCOME` and reads without acknowledging until told to stop; then it
/// closes the connection (and listens no more).
fn silent_server() -> (
    String,
    std::sync::mpsc::Sender<()>,
    std::thread::JoinHandle<usize>,
) {
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let (url, thread) = fake_server("silent", move |mut stream| {
        read_unacknowledged(&mut stream, || stopped.try_recv().is_ok())
    });
    (url, stop, thread)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_gives_up_counts_the_records_it_held() {
    const N: usize = 200;
    let (url, stop, server) = silent_server();
    let options = ClientOptions {
        reconnect_timeout: Duration::from_millis(300),
        ..ClientOptions::default()
    };
    let client = Client::connect_with(&url, options).await.unwrap();
    for i in 0..N {
        let record = Record {
            text: format!("record {i}"),
            ..Record::new(Kind::Log, "APP.given_up")
        };
        client.publish(&record).await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(client.abandoned(), 0, "nothing is given up while it runs");
    // The server goes, no other answers: after the reconnect timeout the client gives up.
    stop.send(()).unwrap();
    server.join().unwrap();
    let closed = Instant::now();
    let until = closed + Duration::from_secs(10);
    while client.error().is_none() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(client.error().is_some(), "the client gave up");
    // It tries until the timeout, not until the backoff's next pause would pass it (150 ms).
    assert!(
        closed.elapsed() >= Duration::from_millis(300),
        "gave up after {:?}",
        closed.elapsed()
    );
    assert_eq!(client.abandoned(), N as u64);
}
