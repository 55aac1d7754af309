//! The feeding side of a mirror: for each `[[mirror]]`, router subscriptions to the mirrored
//! subjects with one bounded queue (priority-aware shedding, like a subscriber's), and a
//! task that connects out to the mirror's client port — with backoff, for as long as the
//! server runs — says `HELLO` (capability `mirror`) and `MIRROR`, sends the objects'
//! snapshot, then drains the queue as `DELIVER` frames and sends every change of a
//! mirrored object as `INFO_CHANGE`. While the mirror is unreachable the queue keeps
//! filling and sheds what does not fit; the mirror hears of what was shed as a gap notice
//! when the connection is back.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use herald_proto::frame::{Hello, PROTOCOL_VERSION};
use herald_proto::info::ObjectData;
use herald_proto::route::MirrorFeed;
use herald_proto::{Filter, Frame};
use herald_router::{Queue, Subscription};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio::time::Instant;

use super::link::MirrorLink;
use crate::config::MirrorConfig;
use crate::connection::FrameReader;
use crate::halves::{self, Reading, Writing};
use crate::info::ChangeListener;
use crate::monitor::{ConnectionState, SubscriptionState};
use crate::shared::Shared;
use crate::shutdown::Shutdown;
use crate::tls::dial;

/// First pause before connecting again; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// The writer does not ping: the reader does, and times the answers.
const WRITER_PING: Duration = Duration::from_secs(24 * 3600);

/// Makes the link of one mirror: its router subscriptions and their queue.
fn new_link(shared: &Shared, config: MirrorConfig) -> Arc<MirrorLink> {
    let connection = shared.next_connection_id();
    let peer = "0.0.0.0:0".parse().expect("a valid address");
    let state = Arc::new(ConnectionState::new(connection, peer));
    *state.name.lock().unwrap_or_else(|p| p.into_inner()) = format!("mirror:{}", config.to);
    let queue = Queue::with_budget(
        shared.config().queue,
        Arc::clone(&state.writer),
        Arc::clone(&shared.queue_budget),
    );
    state.subscriptions().push(SubscriptionState {
        id: 0,
        filter: format!("mirror to {}", config.to),
        queue: Arc::clone(&queue),
        group: None,
    });
    for (id, glob) in config.subjects.iter().enumerate() {
        let filter = Filter::subject(glob.as_str()).expect("a glob checked by the configuration");
        shared.router.subscribe(Arc::new(Subscription {
            connection,
            id: id as u64 + 1,
            filter,
            queue: Arc::clone(&queue),
            visible: None,
            visible_info: None,
            route: false,
            group: None,
        }));
    }
    Arc::new(MirrorLink {
        config,
        connection,
        state,
        queue,
        control: Mutex::new(None),
        up: AtomicBool::new(false),
        round_trip: crate::round_trip::RoundTrip::default(),
        declares: AtomicU64::new(1 << 32),
    })
}

/// Starts feeding every configured mirror; returns the links and their tasks.
pub fn start(shared: &Arc<Shared>) -> (Vec<Arc<MirrorLink>>, Vec<tokio::task::JoinHandle<()>>) {
    let mut links = Vec::new();
    let mut tasks = Vec::new();
    for config in &shared.config().mirrors {
        let link = new_link(shared, config.clone());
        shared
            .info
            .add_listener(Arc::clone(&link) as Arc<dyn ChangeListener>);
        tasks.push(tokio::spawn(run(
            Arc::clone(shared),
            Arc::clone(&link),
            shared.shutdown_signal(),
        )));
        links.push(link);
    }
    (links, tasks)
}

/// Keeps the mirror fed: connects, serves until the connection ends, waits, again. Why it
/// cannot connect is logged as a warning when the reason changes (a mirror down, a refused
/// token, a certificate its CA does not sign), then at debug level while it stays the same.
async fn run(shared: Arc<Shared>, link: Arc<MirrorLink>, mut shutdown: Shutdown) {
    let mut backoff = FIRST_BACKOFF;
    let mut last_failure = None;
    loop {
        let started = Instant::now();
        let ended = tokio::select! {
            ended = serve(&shared, &link) => ended,
            () = shutdown.recv() => return,
        };
        *lock(&link.control) = None;
        link.up.store(false, Ordering::Relaxed);
        link.round_trip.reset();
        match ended {
            Ok(why) => {
                last_failure = None;
                tracing::warn!(mirror = %link.config.to, why, "mirror connection ended");
            }
            Err(why) if last_failure.as_ref() == Some(&why) => {
                tracing::debug!(mirror = %link.config.to, why, "cannot feed the mirror");
            }
            Err(why) => {
                tracing::warn!(mirror = %link.config.to, "cannot feed the mirror: {why} (trying again with backoff)");
                last_failure = Some(why);
            }
        }
        if started.elapsed() > MAX_BACKOFF {
            backoff = FIRST_BACKOFF;
        }
        tokio::select! {
            () = tokio::time::sleep(backoff) => {}
            () = shutdown.recv() => return,
        }
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}

/// One connection to the mirror: `Err` before it was fed, `Ok` (why it ended) after.
async fn serve(shared: &Arc<Shared>, link: &Arc<MirrorLink>) -> Result<&'static str, String> {
    let stream = TcpStream::connect(&link.config.to)
        .await
        .map_err(|err| format!("connecting: {err}"))?;
    let _ = stream.set_nodelay(true);
    let timeout = shared.config().handshake_timeout;
    let (read, mut write) = secured(stream, link, timeout).await?;
    let mut reader = FrameReader::new(read, shared.config().max_frame_bytes);
    let hello = Frame::Hello(Hello {
        version: PROTOCOL_VERSION,
        name: shared.config().name.clone(),
        token: link.config.token.clone(),
        capabilities: vec!["mirror".to_string()],
        heartbeat_ms: shared.config().heartbeat_interval.as_millis() as u64,
        producer: 0,
    });
    write
        .write_all(&hello.to_bytes())
        .await
        .map_err(|err| format!("writing HELLO: {err}"))?;
    let answer = tokio::time::timeout(shared.config().handshake_timeout, reader.read_frame()).await;
    let welcome = match answer {
        Ok(Ok(Some(frame))) => match Frame::decode(frame) {
            Ok(Frame::Welcome(welcome)) => welcome,
            Ok(Frame::Error(error)) => return Err(format!("refused: {}", error.message)),
            _ => return Err("the mirror answered something else than WELCOME".into()),
        },
        _ => return Err("no WELCOME from the mirror".into()),
    };
    let feed = Frame::Mirror(MirrorFeed {
        source: shared.config().name.clone(),
        subjects: link.config.subjects.iter().map(|g| g.to_string()).collect(),
        objects: link.config.objects.iter().map(|g| g.to_string()).collect(),
    });
    write
        .write_all(&feed.to_bytes())
        .await
        .map_err(|err| format!("writing MIRROR: {err}"))?;
    let (control, mut pending) = mpsc::unbounded_channel();
    // The snapshot, then every change: set under the store's lock, so none slips between.
    shared.info.read(|store| {
        // The types first (declared there like a client would; the answers are not awaited).
        for (cid, def) in (1u64..).zip(store.types()) {
            let request = herald_proto::info::InfoRequest::Declare(def.to_data());
            let _ = control.send(Frame::Info { cid, request });
        }
        let objects: Vec<ObjectData> = store
            .objects()
            .filter(|o| link.takes(&o.name))
            .map(|o| o.clone().into())
            .collect();
        for frame in crate::cluster::info::snapshot_frames(&objects, &[]) {
            let _ = control.send(frame);
        }
        *lock(&link.control) = Some(control.clone());
    });
    link.up.store(true, Ordering::Relaxed);
    tracing::info!(mirror = %link.config.to, "feeding the mirror");
    let (frames, control_rx) = mpsc::channel(crate::writer::CONTROL_QUEUE_FRAMES);
    let pump = tokio::spawn(async move {
        while let Some(frame) = pending.recv().await {
            if frames.send(frame).await.is_err() {
                return;
            }
        }
    });
    let max_frame = u32::try_from(welcome.max_frame_bytes).unwrap_or(u32::MAX);
    let mut writer = tokio::spawn(crate::writer::run(
        write,
        Arc::clone(&link.state),
        control_rx,
        WRITER_PING,
        max_frame.min(shared.config().max_frame_bytes),
        true,
    ));
    let ended = read_loop(shared, link, &mut reader, &mut writer).await;
    pump.abort();
    writer.abort();
    Ok(ended)
}

/// The two halves of a connection to the mirror: over TLS when its `to` is
/// `herald+tls://` (the CA and certificate files are read for each connection, so a
/// replaced file counts from the next), else the plain stream's.
async fn secured(
    stream: TcpStream,
    link: &MirrorLink,
    timeout: Duration,
) -> Result<(Reading, Writing), String> {
    let Some(options) = &link.config.tls else {
        return Ok(halves::plain(stream));
    };
    let tls = herald_client::tls::Tls::new(options).map_err(|err| format!("TLS: {err}"))?;
    let settings = dial::Settings {
        ca: "the mirror's `ca`",
        cert: "the mirror's `cert` and `key`",
        plain: "a plain mirror is reached with herald://",
    };
    let stream = dial::connect(&tls, &link.config.to, stream, &settings, timeout).await?;
    Ok(halves::of(stream))
}

async fn read_loop<R: tokio::io::AsyncRead + Unpin>(
    shared: &Shared,
    link: &MirrorLink,
    reader: &mut FrameReader<R>,
    writer: &mut tokio::task::JoinHandle<std::io::Result<()>>,
) -> &'static str {
    let mut check = tokio::time::interval(shared.config().heartbeat_interval);
    let mut last_heard = Instant::now();
    loop {
        let frame = tokio::select! {
            read = reader.read_frame() => match read {
                Ok(Some(frame)) => frame,
                Ok(None) => return "closed by the mirror",
                Err(_) => return "read failed",
            },
            _ = check.tick() => {
                if last_heard.elapsed() > shared.config().heartbeat_timeout {
                    return "the mirror stopped answering (heartbeat timeout)";
                }
                link.round_trip.sent();
                link.send(Frame::Ping);
                continue;
            }
            _ = &mut *writer => return "write failed",
        };
        last_heard = Instant::now();
        match Frame::decode(frame) {
            Ok(Frame::Ping) => link.send(Frame::Pong),
            Ok(Frame::Pong) => link.round_trip.answered(),
            Ok(Frame::Error(error)) if error.cid == 0 => {
                tracing::warn!(mirror = %link.config.to, "the mirror refused the feed: {}", error.message);
                return "the mirror sent an error";
            }
            Ok(Frame::Error(error)) => {
                tracing::warn!(mirror = %link.config.to, "the mirror refused part of the feed: {}", error.message);
            }
            _ => {}
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}
