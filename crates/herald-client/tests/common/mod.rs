//! A fake server for the client's tests: it says `WELCOME` on one connection and then reads
//! without ever acknowledging, as a stalled or a refusing server would.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::JoinHandle;
use std::time::Duration;

/// Accepts one connection on a loopback port (then listens no more), says `WELCOME` as
/// `name`, and runs `then` on the connection in a thread of its own. Returns the server's
/// URL and that thread.
pub fn fake_server<T: Send + 'static>(
    name: &'static str,
    then: impl FnOnce(TcpStream) -> T + Send + 'static,
) -> (String, JoinHandle<T>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("herald://{}", listener.local_addr().unwrap());
    let thread = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        drop(listener);
        let welcome = herald_proto::Frame::Welcome(herald_proto::frame::Welcome {
            version: herald_proto::frame::PROTOCOL_VERSION,
            server: name.into(),
            heartbeat_ms: 60_000,
            max_frame_bytes: 1 << 20,
            connection: 1,
        });
        stream.write_all(&welcome.to_bytes()).unwrap();
        then(stream)
    });
    (url, thread)
}

/// Reads what comes and acknowledges nothing, until `stop` says so or the client closes;
/// returns the bytes read.
#[allow(dead_code)] // each test file uses what it needs
pub fn read_unacknowledged(stream: &mut TcpStream, mut stop: impl FnMut() -> bool) -> usize {
    stream
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    let (mut read, mut sink) = (0, [0u8; 65_536]);
    while !stop() {
        match stream.read(&mut sink) {
            Ok(0) => break,
            Ok(n) => read += n,
            Err(_) => {}
        }
    }
    read
}
