//! A client whose connection ends for good counts what it held without an acknowledgement
//! (`Client::abandoned`), and nothing while it runs.

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use herald_client::{Client, ClientOptions};
use herald_proto::{Kind, Record};

/// A server that says `WELCOME` and reads without acknowledging until told to stop; then it
/// closes the connection and no longer listens.
fn silent_server() -> (
    String,
    std::sync::mpsc::Sender<()>,
    std::thread::JoinHandle<()>,
) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("herald://{}", listener.local_addr().unwrap());
    let (stop, stopped) = std::sync::mpsc::channel::<()>();
    let thread = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        drop(listener);
        let welcome = herald_proto::Frame::Welcome(herald_proto::frame::Welcome {
            version: herald_proto::frame::PROTOCOL_VERSION,
            server: "silent".into(),
            heartbeat_ms: 60_000,
            max_frame_bytes: 1 << 20,
            connection: 1,
        });
        stream.write_all(&welcome.to_bytes()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_millis(20)))
            .unwrap();
        let mut sink = [0u8; 65_536];
        while stopped.try_recv().is_err() {
            if matches!(stream.read(&mut sink), Ok(0)) {
                break;
            }
        }
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
    let until = Instant::now() + Duration::from_secs(10);
    while client.error().is_none() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(client.error().is_some(), "the client gave up");
    assert_eq!(client.abandoned(), N as u64);
}
