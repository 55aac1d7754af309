//! Serves HTTP connections: one task per connection, as axum's `serve` does, plus what it
//! cannot be told — a limit on connections in all and per address, and a deadline for each
//! request's head, so a client that connects and says nothing, sends its head a byte at a
//! time, or sits idle between requests is closed instead of holding a file descriptor for
//! ever.
//!
//! The deadline is hyper's `header_read_timeout`: it runs whenever the connection waits
//! for a request's head, from the connection's start and again after each response. It
//! does not run while a response streams out or once a WebSocket is upgraded.
//!
//! The OTLP/gRPC port is served here too, in HTTP/2 ([`Protocol::Http2`]): its clients keep
//! a connection open and idle between exports, so a connection must send its first request
//! within the head deadline and then has HTTP/2 keep-alive pings (a peer that stops
//! answering is closed), at most 16 requests in flight, and the HTTP port's connection
//! limits.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::{http1, http2};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinSet;
use tower::ServiceExt;

use super::listener::{ClientCertificate, CuttableStream, PeerAddr};
use crate::connection_limit::Refusal;
use crate::shared::Shared;
use crate::shutdown::Shutdown;
use crate::tls::Tls;

/// What a browser or tool that speaks plain HTTP to the HTTPS port is told.
const NOT_TLS_ANSWER: &str = "this port serves HTTPS: use https:// instead of http://\n";

/// How often an idle HTTP/2 connection is pinged, and how long an answer may take.
const HTTP2_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(30);
/// Requests one HTTP/2 connection may have in flight (each may buffer up to
/// `max_frame_bytes` of body).
const HTTP2_STREAMS: u32 = 16;

/// What a listener's connections speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// HTTP/1.1: the HTTP port (API, UI, WebSockets).
    Http1,
    /// HTTP/2 from the first byte (prior knowledge), or by ALPN over TLS: gRPC.
    Http2,
}

/// Accepts and serves until shutdown; then stops accepting, asks every connection to finish
/// its request in flight, and returns once all have ended (or `cut` ended them).
pub async fn run(
    listener: TcpListener,
    app: Router,
    protocol: Protocol,
    shared: Arc<Shared>,
    mut shutdown: Shutdown,
    cut: watch::Receiver<bool>,
) {
    let limit = Arc::clone(&shared.http_connections);
    let (stopping, stop) = watch::channel(false);
    let mut connections = JoinSet::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            () = shutdown.recv() => break,
        };
        let (stream, peer) = match accepted {
            Ok(pair) => pair,
            Err(err) => {
                // Out of file descriptors, most likely: wait for connections to end.
                tracing::error!(error = %err, "accepting an HTTP connection failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        let permit = match limit.try_acquire(peer.ip()) {
            Ok(permit) => permit,
            Err(refusal) => {
                shared.monitor.count_http_refused();
                tokio::spawn(refuse(stream, refusal));
                continue;
            }
        };
        let connection = Connection {
            app: app.clone(),
            protocol,
            shared: Arc::clone(&shared),
            peer: PeerAddr(peer),
        };
        let (stop, cut) = (stop.clone(), cut.clone());
        connections.spawn(async move {
            let _ = stream.set_nodelay(true);
            match connection.shared.tls.clone() {
                None => {
                    connection
                        .serve(CuttableStream::new(stream, cut), None, stop)
                        .await
                }
                Some(tls) => connection.serve_tls(&tls, stream, stop, cut).await,
            }
            drop(permit);
        });
    }
    let _ = stopping.send(true);
    while connections.join_next().await.is_some() {}
}

/// One accepted connection.
struct Connection {
    app: Router,
    protocol: Protocol,
    shared: Arc<Shared>,
    peer: PeerAddr,
}

impl Connection {
    /// Serves HTTPS: the TLS handshake within the request-head deadline, then HTTP over it.
    async fn serve_tls(
        self,
        tls: &Tls,
        stream: TcpStream,
        stop: watch::Receiver<bool>,
        cut: watch::Receiver<bool>,
    ) {
        let timeout = self.shared.config().http_limits.header_timeout;
        let wrap = |stream| CuttableStream::new(stream, cut);
        let answer = super::error::plain_bad_request(NOT_TLS_ANSWER);
        let acceptor = match self.protocol {
            Protocol::Http1 => tls.acceptor(),
            Protocol::Http2 => tls.acceptor_h2(),
        };
        match crate::tls::session::accept(acceptor, stream, wrap, &answer, timeout).await {
            Ok((stream, certificate)) => self.serve(stream, certificate, stop).await,
            Err(failure) => {
                self.shared.monitor.count_http_tls_failed();
                tracing::debug!(peer = %self.peer.0, "closing an HTTP connection: {failure}");
            }
        }
    }

    async fn serve<IO>(
        self,
        stream: IO,
        certificate: Option<String>,
        mut stop: watch::Receiver<bool>,
    ) where
        IO: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let io = TokioIo::new(stream);
        let (app, peer) = (self.app, self.peer);
        let certificate = certificate.map(ClientCertificate);
        // Whether a request came: an HTTP/2 connection that sends none in time is closed.
        let asked = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let seen = Arc::clone(&asked);
        let service = hyper::service::service_fn(move |mut request: hyper::Request<Incoming>| {
            seen.store(true, std::sync::atomic::Ordering::Relaxed);
            request.extensions_mut().insert(ConnectInfo(peer));
            if let Some(certificate) = &certificate {
                request.extensions_mut().insert(certificate.clone());
            }
            let response = app.clone().oneshot(request.map(Body::new));
            async move { Ok::<_, Infallible>(response.await.unwrap_or_else(|e| match e {})) }
        });
        let result = match self.protocol {
            // One protocol per port: hyper's HTTP/1 connection starts its head deadline at
            // once, where a version-sniffing one would wait for a first byte.
            Protocol::Http1 => {
                let connection = http1::Builder::new()
                    .timer(TokioTimer::new())
                    .header_read_timeout(self.shared.config().http_limits.header_timeout)
                    .serve_connection(io, service)
                    .with_upgrades();
                tokio::pin!(connection);
                loop {
                    tokio::select! {
                        result = connection.as_mut() => break result,
                        _ = stop.wait_for(|stop| *stop) => connection.as_mut().graceful_shutdown(),
                    }
                }
            }
            Protocol::Http2 => {
                let connection = http2::Builder::new(TokioExecutor::new())
                    .timer(TokioTimer::new())
                    .keep_alive_interval(HTTP2_KEEP_ALIVE)
                    .keep_alive_timeout(HTTP2_KEEP_ALIVE)
                    .max_concurrent_streams(HTTP2_STREAMS)
                    .serve_connection(io, service);
                tokio::pin!(connection);
                // The head deadline's counterpart: the first request within it.
                let first = tokio::time::sleep(self.shared.config().http_limits.header_timeout);
                tokio::pin!(first);
                let mut waited = false;
                let asked = || asked.load(std::sync::atomic::Ordering::Relaxed);
                loop {
                    tokio::select! {
                        result = connection.as_mut() => break result,
                        _ = stop.wait_for(|stop| *stop) => connection.as_mut().graceful_shutdown(),
                        () = &mut first, if !waited && !asked() => {
                            waited = true;
                            self.shared.monitor.count_http_header_timeout();
                            connection.as_mut().graceful_shutdown();
                        }
                    }
                }
            }
        };
        if let Err(err) = result {
            if err.is_timeout() {
                self.shared.monitor.count_http_header_timeout();
                tracing::debug!(peer = %peer.0, "closing an HTTP connection that sent no request in time");
            }
        }
    }
}

/// Answers a connection over a limit with a 503 naming the limit, and closes it.
async fn refuse(mut stream: TcpStream, refusal: Refusal) {
    let body = serde_json::json!({ "error": refusal.to_string(), "code": "limit" }).to_string();
    let response = format!(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}
