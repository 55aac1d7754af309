//! A published record goes out at once, with no ping to carry it: the publisher wakes the
//! connection's writer when the writer had taken everything before, and the records that
//! come while it writes ride on that wake (the writer takes all it finds).

mod common;

use std::io::Read;
use std::sync::mpsc;
use std::time::Duration;

use common::fake_server;

use herald_client::{Client, ClientOptions};
use herald_proto::{Kind, Record};

/// Waits at most 5 s until the server has read `at_least` bytes in all; returns how many.
fn read_until(bytes: &mpsc::Receiver<usize>, mut total: usize, at_least: usize) -> usize {
    while total < at_least {
        match bytes.recv_timeout(Duration::from_secs(5)) {
            Ok(n) => total += n,
            Err(_) => panic!("{total} bytes written of the {at_least} expected, after 5 s"),
        }
    }
    total
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn records_are_written_at_once_without_a_ping_or_a_flush() {
    let (sender, bytes) = mpsc::channel();
    let (url, _server) = fake_server("quiet", move |mut stream| {
        let mut buffer = [0u8; 65_536];
        while let Ok(n @ 1..) = stream.read(&mut buffer) {
            if sender.send(n).is_err() {
                break;
            }
        }
    });
    // The fake server pings never (its WELCOME says a minute), and the client a minute apart.
    let options = ClientOptions {
        heartbeat_interval: Duration::from_secs(60),
        heartbeat_timeout: Duration::from_secs(120),
        ..ClientOptions::default()
    };
    let client = Client::connect_with(&url, options).await.unwrap();
    let record = |i: usize| Record {
        text: format!("record {i:04}"),
        ..Record::new(Kind::Log, "APP.wake")
    };
    let size = record(0).to_bytes().len();
    // The HELLO went before WELCOME; what the server reads now is the client's publishing.
    let mut total = 0;
    while let Ok(n) = bytes.recv_timeout(Duration::from_millis(200)) {
        total += n;
    }

    // One record, with the writer asleep.
    client.publish(&record(0)).await.unwrap();
    total = read_until(&bytes, total, total + size);
    // Another, once the writer has taken the first and sleeps again.
    client.publish(&record(1)).await.unwrap();
    total = read_until(&bytes, total, total + size);
    // A run: most of it comes while the writer writes, and rides on one wake.
    for i in 2..2_002 {
        client.publish(&record(i)).await.unwrap();
    }
    read_until(&bytes, total, total + 2_000 * size);
}
