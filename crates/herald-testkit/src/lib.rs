//! Test helpers shared by the crates' integration tests: a real server on `127.0.0.1:0`,
//! a raw connection that speaks frames byte by byte, and the wire test vectors.
//!
//! # Layout
//! - [`TestServer`]: starts `herald_server::Server` in-process on a free port.
//! - [`RawConnection`]: writes arbitrary bytes, reads and decodes frames, with timeouts.
//! - [`ServeProcess`]: a real `herald serve` process on a free port; [`terminate`] stops a
//!   child process with SIGTERM and waits for its exit status.
//! - [`http`]: [`http::request`], a tiny HTTP/1.1 client over a `TcpStream`, for the HTTP
//!   front door's tests.
//! - [`vectors`]: `testdata/vectors/*.json` and their frames.
//! - [`fuzz`]: the bodies of the fuzz targets in `fuzz/`, run on stable by
//!   `tests/fuzz_corpus.rs` over the committed corpus.

pub mod fuzz;
pub mod http;
mod serve_process;
pub mod vectors;

pub use serve_process::{terminate, ServeProcess};

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use herald_proto::frame::{Hello, PROTOCOL_VERSION};
use herald_proto::frame_buffer::FrameBuffer;
use herald_proto::{Frame, FrameError};
use herald_server::{Config, Server};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// How long helpers wait for an expected frame before failing the test.
pub const WAIT: Duration = Duration::from_secs(5);

/// A real server on a free loopback port.
#[derive(Debug)]
pub struct TestServer {
    /// `None` once stopped.
    server: Option<Server>,
    _data_dir: TempDirGuard,
}

impl Drop for TestServer {
    /// A test that ends without [`TestServer::stop`] leaves the server's tasks to the
    /// runtime, which drops them (and with them the archive, which then writes its last
    /// blocks) only after this: the archive is closed here, so that its files are written
    /// before the data directory is removed and not into a directory made anew after it.
    fn drop(&mut self) {
        if let Some(server) = &self.server {
            server.close_archive();
        }
    }
}

/// Removes a test's temporary directory when dropped, unless the test is failing (then it
/// stays, to look at).
#[derive(Debug)]
pub struct TempDirGuard(pub std::path::PathBuf);

impl Drop for TempDirGuard {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

impl TestServer {
    /// Starts a server with the default configuration on `127.0.0.1:0`.
    ///
    /// # Panics
    /// If the server cannot bind, which fails the test.
    pub async fn start() -> TestServer {
        TestServer::start_with(Config::default()).await
    }

    /// Starts a server with `config`, on `127.0.0.1:0` whatever `config.listen` and
    /// `config.http` say, with a fresh data directory of its own.
    ///
    /// # Panics
    /// If the server cannot bind, which fails the test.
    pub async fn start_with(config: Config) -> TestServer {
        let loopback = "127.0.0.1:0".parse().expect("loopback address");
        let data_dir = temp_dir("server");
        let config = Config {
            listen: loopback,
            http: loopback,
            data_dir: data_dir.clone(),
            ..config
        };
        TestServer {
            server: Some(Server::start(config).await.expect("test server binds")),
            _data_dir: TempDirGuard(data_dir),
        }
    }

    /// Returns the server's address.
    pub fn addr(&self) -> SocketAddr {
        self.running().local_addr()
    }

    /// Returns `herald://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("herald://{}", self.addr())
    }

    /// Returns the address HTTP is served on.
    pub fn http_addr(&self) -> SocketAddr {
        self.running().http_addr()
    }

    /// Returns `http://127.0.0.1:<port>`.
    pub fn http_url(&self) -> String {
        format!("http://{}", self.http_addr())
    }

    /// Returns the syslog listeners' UDP and TCP addresses, if `[syslog]` names them.
    pub fn syslog_addrs(&self) -> (Option<SocketAddr>, Option<SocketAddr>) {
        self.running().syslog_addrs()
    }

    /// Returns the server's monitor.
    pub fn monitor(&self) -> &herald_server::monitor::Monitor {
        self.running().monitor()
    }

    /// Returns the whole monitor snapshot, every section included (what `MONITOR` answers).
    pub fn monitor_snapshot(&self) -> Vec<herald_proto::value::Field> {
        self.running().monitor_snapshot()
    }

    /// Stops the server.
    pub async fn stop(mut self) {
        if let Some(server) = self.server.take() {
            server.shutdown().await;
        }
    }

    /// Returns the server itself (to reload it, for one).
    pub fn server(&self) -> &Server {
        self.running()
    }

    fn running(&self) -> &Server {
        self.server
            .as_ref()
            .expect("the test server runs until stopped")
    }
}

/// Returns a new, empty directory under the system's temporary directory, unique to this
/// process and call. [`TestServer`] and [`ServeProcess`] remove theirs when a test passes;
/// a test that makes one itself can hold a [`TempDirGuard`] for it.
///
/// # Panics
/// If the directory cannot be created.
pub fn temp_dir(label: &str) -> std::path::PathBuf {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("herald-test-{}-{label}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temporary directory");
    dir
}

/// A TCP connection driven frame by frame, for protocol tests.
#[derive(Debug)]
pub struct RawConnection {
    stream: TcpStream,
    buffer: FrameBuffer,
}

impl RawConnection {
    /// Connects to `addr` without a handshake.
    ///
    /// # Panics
    /// If the connection fails.
    pub async fn connect(addr: SocketAddr) -> RawConnection {
        let stream = TcpStream::connect(addr)
            .await
            .expect("connect to test server");
        RawConnection {
            stream,
            buffer: FrameBuffer::new(64 << 20),
        }
    }

    /// Connects with a receive buffer of `bytes` (the kernel may round it), so that a
    /// connection that stops reading backs up after a known amount of data.
    ///
    /// # Panics
    /// If the connection fails.
    pub async fn connect_with_receive_buffer(addr: SocketAddr, bytes: u32) -> RawConnection {
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .set_recv_buffer_size(bytes)
            .expect("receive buffer size");
        let stream = socket.connect(addr).await.expect("connect to test server");
        RawConnection {
            stream,
            buffer: FrameBuffer::new(64 << 20),
        }
    }

    /// Connects and completes the handshake as client `name`.
    ///
    /// # Panics
    /// If the server does not answer with `WELCOME`.
    pub async fn handshake(addr: SocketAddr, name: &str) -> RawConnection {
        RawConnection::connect(addr)
            .await
            .complete_handshake(name)
            .await
    }

    /// Completes the handshake as client `name` on a connection made without one.
    ///
    /// # Panics
    /// If the server does not answer with `WELCOME`.
    pub async fn complete_handshake(self, name: &str) -> RawConnection {
        let mut connection = self;
        let hello = Hello {
            version: PROTOCOL_VERSION,
            name: name.to_string(),
            ..Hello::default()
        };
        connection.send(&Frame::Hello(hello)).await;
        match connection.next_frame().await {
            Some(Frame::Welcome(_)) => connection,
            other => panic!("expected WELCOME, got {other:?}"),
        }
    }

    /// Writes raw bytes.
    ///
    /// # Panics
    /// If the write fails.
    pub async fn send_bytes(&mut self, bytes: &[u8]) {
        self.stream
            .write_all(bytes)
            .await
            .expect("write to test server");
    }

    /// Writes a frame.
    ///
    /// # Panics
    /// If the write fails.
    pub async fn send(&mut self, frame: &Frame) {
        self.send_bytes(&frame.to_bytes()).await;
    }

    /// Reads the next frame other than `PING`, or `None` once the server closed the
    /// connection. Waits at most [`WAIT`].
    ///
    /// # Panics
    /// On timeout or an undecodable frame.
    pub async fn next_frame(&mut self) -> Option<Frame> {
        loop {
            let frame = self
                .next_raw()
                .await
                .expect("server frames are well formed")?;
            let frame = Frame::decode(frame).expect("server frames decode");
            if frame != Frame::Ping {
                return Some(frame);
            }
        }
    }

    /// Reads the next frame's bytes, `None` at a clean close.
    ///
    /// # Panics
    /// On timeout.
    pub async fn next_raw(&mut self) -> Result<Option<Bytes>, FrameError> {
        tokio::time::timeout(WAIT, async {
            loop {
                if let Some(frame) = self.buffer.next_frame()? {
                    return Ok(Some(frame));
                }
                match self.stream.read_buf(self.buffer.spare()).await {
                    Ok(0) | Err(_) => return Ok(None),
                    Ok(_) => {}
                }
            }
        })
        .await
        .expect("server answered in time")
    }

    /// Reads frames until the server closes; returns the `ERROR` frames it sent.
    pub async fn errors_until_close(&mut self) -> Vec<herald_proto::ErrorFrame> {
        let mut errors = Vec::new();
        while let Some(frame) = self.next_frame().await {
            if let Frame::Error(error) = frame {
                errors.push(error);
            }
        }
        errors
    }
}
