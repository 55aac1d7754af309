//! One client connection from handshake to close: reads frames, applies commands, and
//! watches the heartbeat. Replies go through the connection's writer task.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use herald_proto::frame::{Hello, Welcome, PROTOCOL_VERSION};
use herald_proto::{ErrorCode, ErrorFrame, Frame, FrameError};
use herald_router::RouteContext;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;
use tracing::Instrument;

use crate::auth::Access;
use crate::command::{self, Refused};
use crate::connection::{FrameReader, ReadError};
use crate::events::{self, CloseReason};
use crate::monitor::ConnectionState;
use crate::session_state::{Close, Session, QUERIES_AT_ONCE};
use crate::shared::Shared;
use crate::shutdown::Shutdown;
use crate::writer::CONTROL_QUEUE_FRAMES;

/// How long the writer may take to flush after the session ends.
const WRITER_FLUSH_TIMEOUT: Duration = Duration::from_secs(2);

/// Serves one accepted connection until it closes: over TLS when the server has it.
pub async fn run(stream: TcpStream, peer: SocketAddr, shared: Arc<Shared>, shutdown: Shutdown) {
    let id = shared.next_connection_id();
    let span = tracing::info_span!("connection", id, %peer);
    let _ = stream.set_nodelay(true);
    async move {
        let Some(tls) = shared.tls.clone() else {
            let (read, write) = stream.into_split();
            return serve(read, write, None, peer, id, shared, shutdown).await;
        };
        let timeout = shared.config().handshake_timeout;
        let answer = not_tls_answer(&shared.config().name);
        match crate::tls::session::accept(tls.acceptor(), stream, |s| s, &answer, timeout).await {
            Ok((stream, certificate)) => {
                let (read, write) = tokio::io::split(stream);
                serve(read, write, certificate, peer, id, shared, shutdown).await;
            }
            Err(failure) => {
                events::frame_rejected(&shared.monitor, id, peer, &failure.to_string());
                events::connection_closed(
                    &shared.monitor,
                    id,
                    peer,
                    CloseReason::TlsFailed,
                    "during the TLS handshake",
                );
            }
        }
    }
    .instrument(span)
    .await;
}

async fn serve<R, W>(
    read: R,
    mut write: W,
    certificate: Option<String>,
    peer: SocketAddr,
    id: u64,
    shared: Arc<Shared>,
    mut shutdown: Shutdown,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let mut reader = FrameReader::new(read, shared.config().max_frame_bytes);
    let state = Arc::new(ConnectionState::new(id, peer));
    let (hello, access) = match handshake(&mut reader, &shared, certificate.as_deref()).await {
        Ok(handshaken) => handshaken,
        Err(close) => {
            if let Some(error) = &close.error {
                events::frame_rejected(&shared.monitor, id, peer, &error.message);
                let answer = match close.http {
                    true => http_answer(&error.message),
                    false => Frame::Error(error.clone()).to_bytes(),
                };
                let _ = write.write_all(&answer).await;
            }
            events::connection_closed(&shared.monitor, id, peer, close.reason, "during handshake");
            return;
        }
    };
    *state.name.lock().unwrap_or_else(|p| p.into_inner()) = hello.name.clone();
    tracing::debug!(client = %hello.name, "handshake complete");
    let welcome = Welcome {
        version: PROTOCOL_VERSION,
        server: shared.config().name.clone(),
        heartbeat_ms: shared.config().heartbeat_interval.as_millis() as u64,
        max_frame_bytes: u64::from(shared.config().max_frame_bytes),
        connection: id,
    };
    if write
        .write_all(&Frame::Welcome(welcome).to_bytes())
        .await
        .is_err()
    {
        events::connection_closed(
            &shared.monitor,
            id,
            peer,
            CloseReason::IoError,
            "writing WELCOME",
        );
        return;
    }
    let _ = state.access.set(access.clone());
    shared.monitor.add_connection(Arc::clone(&state));
    if !shared.guard.still_valid(&access) {
        // Revoked between the handshake and the registration, which the watcher missed.
        state.revoked.notify_one();
    }
    let (replies, control) = mpsc::channel(CONTROL_QUEUE_FRAMES);
    let writer = tokio::spawn(crate::writer::run(
        write,
        Arc::clone(&state),
        control,
        shared.config().heartbeat_interval,
        shared.config().max_frame_bytes,
        false,
    ));
    let mut session = Session {
        shared: Arc::clone(&shared),
        state,
        replies,
        route: RouteContext::default(),
        queries: Arc::new(tokio::sync::Semaphore::new(QUERIES_AT_ONCE)),
        access,
        producer: hello.producer,
        acks: crate::acks::AckOrder::default(),
        fates: Vec::new(),
        feed: None,
    };
    let timeout = heartbeat_timeout(&shared.config(), &hello);
    let close = read_loop(&mut session, &mut reader, &mut shutdown, timeout).await;
    if let Some(error) = &close.error {
        if close.reason != CloseReason::ServerShutdown {
            events::frame_rejected(&shared.monitor, id, peer, &error.message);
        }
        session.reply(Frame::Error(error.clone())).await;
    }
    crate::closing::unregister(&shared, &session.state, close.reason);
    drop(session);
    let _ = tokio::time::timeout(WRITER_FLUSH_TIMEOUT, writer).await;
    events::connection_closed(
        &shared.monitor,
        id,
        peer,
        close.reason,
        &close_detail(&close),
    );
}

fn close_detail(close: &Close) -> String {
    close
        .error
        .as_ref()
        .map(|e| e.message.clone())
        .unwrap_or_default()
}

async fn handshake<R>(
    reader: &mut FrameReader<R>,
    shared: &Shared,
    certificate: Option<&str>,
) -> Result<(Hello, Access), Close>
where
    R: tokio::io::AsyncRead + Unpin,
{
    let timeout = shared.config().handshake_timeout;
    let frame = match tokio::time::timeout(timeout, reader.read_frame()).await {
        Err(_) => {
            let message = format!("no HELLO within {} ms", timeout.as_millis());
            return Err(Close::with_error(
                CloseReason::HandshakeTimeout,
                ErrorCode::Handshake,
                message,
            ));
        }
        Ok(read) => read.map_err(read_close)?,
    };
    let Some(frame) = frame else {
        return Err(Close::quiet(CloseReason::ClientClosed));
    };
    let hello = match Frame::decode(frame).map_err(frame_close)? {
        Frame::Hello(hello) if hello.version == PROTOCOL_VERSION => hello,
        Frame::Hello(hello) => {
            return Err(Close::with_error(
                CloseReason::ProtocolError,
                ErrorCode::Version,
                format!(
                    "unsupported protocol version {} (this server speaks {PROTOCOL_VERSION})",
                    hello.version
                ),
            ))
        }
        other => {
            return Err(Close::with_error(
                CloseReason::ProtocolError,
                ErrorCode::Handshake,
                format!(
                    "expected HELLO as the first frame, got {}",
                    other.frame_type().name()
                ),
            ))
        }
    };
    let access = shared
        .guard
        .authenticate(&hello.token, certificate)
        .map_err(|message| {
            Close::with_error(CloseReason::Unauthorized, ErrorCode::Unauthorized, message)
        })?;
    Ok((hello, access))
}

/// Missed client heartbeats after which a client that asked for a slower interval is dead.
const MISSED_HEARTBEATS: u32 = 3;

/// Returns how long this client may stay silent: the configured timeout, stretched for a
/// client that said in `HELLO` it pings less often (so it is not closed between two pings).
fn heartbeat_timeout(config: &crate::Config, hello: &Hello) -> Duration {
    let asked = Duration::from_millis(hello.heartbeat_ms).saturating_mul(MISSED_HEARTBEATS);
    config.heartbeat_timeout.max(asked)
}

async fn read_loop<R>(
    session: &mut Session,
    reader: &mut FrameReader<R>,
    shutdown: &mut Shutdown,
    timeout: Duration,
) -> Close
where
    R: tokio::io::AsyncRead + Unpin,
{
    let mut check = tokio::time::interval(session.shared.config().heartbeat_interval);
    let mut last_heard = Instant::now();
    loop {
        tokio::select! {
            read = reader.read_frame() => {
                last_heard = Instant::now();
                let frame = match read {
                    Ok(Some(frame)) => frame,
                    Ok(None) => return Close::quiet(CloseReason::ClientClosed),
                    Err(err) => return read_close(err),
                };
                let request = match command::decode(frame) {
                    Ok(request) => request,
                    Err(Refused::Answer(error)) => {
                        events::request_refused(&session.shared.monitor, session.state.id, &error.message);
                        session.reply(Frame::Error(error)).await;
                        continue;
                    }
                    Err(Refused::Close(err)) => return frame_close(err),
                };
                if let Err(close) = command::apply(session, request).await {
                    return close;
                }
            }
            _ = check.tick() => {
                if last_heard.elapsed() > timeout {
                    let message = format!("no frame from the client for {} ms", timeout.as_millis());
                    return Close::with_error(CloseReason::HeartbeatTimeout, ErrorCode::HeartbeatTimeout, message);
                }
            }
            () = session.state.revoked.notified() => {
                return revoked(&session.access);
            }
            () = session.state.slow_consumer.notified() => {
                // The writer has told the client why and shut the socket.
                return Close::quiet(CloseReason::SlowConsumer);
            }
            () = shutdown.recv() => {
                return Close::with_error(CloseReason::ServerShutdown, ErrorCode::ShuttingDown, "server shutting down");
            }
        }
    }
}

fn revoked(access: &Access) -> Close {
    let message = match access.name() {
        Some(name) => format!(
            "identity `{name}` was revoked or its permissions changed; connect again with a \
             current token"
        ),
        None => "this server now needs a token: connect again with one".to_string(),
    };
    Close::with_error(CloseReason::Revoked, ErrorCode::Unauthorized, message)
}

/// What a client that speaks plain TCP to a TLS port gets: an `ERROR` frame it can read.
fn not_tls_answer(server: &str) -> Vec<u8> {
    let message =
        format!("server `{server}` speaks TLS on this port: connect with herald+tls://host:port");
    Frame::Error(ErrorFrame {
        cid: 0,
        code: ErrorCode::Handshake,
        message,
    })
    .to_bytes()
}

/// Returns an HTTP 400 response saying `message`, for an HTTP client on the native port.
fn http_answer(message: &str) -> Vec<u8> {
    let body = format!("{message}; connect with a Herald client (herald://host:port)\n");
    crate::http::error::plain_bad_request(&body)
}

fn read_close(err: ReadError) -> Close {
    match err {
        ReadError::Frame(err) => frame_close(err),
        ReadError::Truncated(pending) => Close::with_error(
            CloseReason::ProtocolError,
            ErrorCode::BadFrame,
            format!("connection closed in the middle of a frame ({pending} bytes pending)"),
        ),
        ReadError::Io(_) => Close::quiet(CloseReason::IoError),
    }
}

fn frame_close(err: FrameError) -> Close {
    let (reason, code) = match err {
        FrameError::TooLarge { .. } => (CloseReason::FrameTooLarge, ErrorCode::FrameTooLarge),
        _ => (CloseReason::ProtocolError, ErrorCode::BadFrame),
    };
    let http = err == FrameError::Http;
    Close {
        http,
        ..Close::with_error(reason, code, err.to_string())
    }
}
