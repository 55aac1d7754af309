//! The server: binds, accepts, and shuts down gracefully.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use herald_router::Router;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::config::Config;
use crate::info::InfoService;
use crate::monitor::Monitor;
use crate::shutdown::Shutdown;

/// How often the monitor's record rates are sampled.
const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);
/// How long shutdown waits for sessions to say goodbye.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// What every session shares.
#[derive(Debug)]
pub struct Shared {
    /// The validated configuration.
    pub config: Config,
    /// The router.
    pub router: Router,
    /// Counters and connections.
    pub monitor: Monitor,
    /// Information objects: latest values, types, info subscribers.
    pub info: InfoService,
    next_connection: AtomicU64,
}

impl Shared {
    /// Returns a new connection id.
    pub fn next_connection_id(&self) -> u64 {
        self.next_connection.fetch_add(1, Ordering::Relaxed)
    }
}

/// A running server.
#[derive(Debug)]
pub struct Server {
    shared: Arc<Shared>,
    local_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    sessions_done: mpsc::Receiver<()>,
    tasks: Vec<JoinHandle<()>>,
}

impl Server {
    /// Binds the configured address and starts accepting connections.
    ///
    /// # Errors
    /// The bind error, with the address, e.g. when the port is taken.
    pub async fn start(config: Config) -> std::io::Result<Server> {
        let listener = TcpListener::bind(config.listen).await.map_err(|err| {
            std::io::Error::new(
                err.kind(),
                format!("cannot listen on {}: {err}", config.listen),
            )
        })?;
        let local_addr = listener.local_addr()?;
        let info_dir = config.data_dir.join("info");
        let info = InfoService::open(&info_dir).map_err(|err| {
            std::io::Error::other(format!(
                "cannot open the information store in {}: {err}",
                info_dir.display()
            ))
        })?;
        let shared = Arc::new(Shared {
            info,
            monitor: Monitor::new(&config.name),
            router: Router::new(),
            config,
            next_connection: AtomicU64::new(1),
        });
        let (shutdown, receiver) = watch::channel(false);
        let (done, sessions_done) = mpsc::channel(1);
        let accept = tokio::spawn(crate::listener::run(
            listener,
            Arc::clone(&shared),
            Shutdown::new(receiver.clone()),
            done,
        ));
        let sampler = tokio::spawn(sample(Arc::clone(&shared), Shutdown::new(receiver)));
        tracing::info!(listen = %local_addr, "herald server ready");
        Ok(Server {
            shared,
            local_addr,
            shutdown,
            sessions_done,
            tasks: vec![accept, sampler],
        })
    }

    /// Returns the address the server listens on (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Returns the server's counters.
    pub fn monitor(&self) -> &Monitor {
        &self.shared.monitor
    }

    /// Stops accepting, tells every client, and waits (a few seconds at most) for the
    /// sessions to end.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, self.sessions_done.recv()).await;
        tracing::info!("herald server stopped");
    }
}

async fn sample(shared: Arc<Shared>, mut shutdown: Shutdown) {
    let mut tick = tokio::time::interval(SAMPLE_INTERVAL);
    let mut last = tokio::time::Instant::now();
    loop {
        tokio::select! {
            _ = tick.tick() => {
                shared.info.sync();
                shared.monitor.sample(last.elapsed());
                last = tokio::time::Instant::now();
            }
            () = shutdown.recv() => {
                shared.info.sync();
                return;
            }
        }
    }
}
