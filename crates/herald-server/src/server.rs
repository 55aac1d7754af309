//! The server: binds, accepts, and shuts down gracefully.

use std::net::SocketAddr;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use herald_proto::value::Field;
use herald_router::{QueueBudget, Router};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::auth::Guard;
use crate::cluster::RouteGuards;
use crate::config::Config;
use crate::connection_limit::ConnectionLimit;
use crate::data_lock::DataDirGuard;
use crate::info::InfoService;
use crate::local::Local;
use crate::monitor::Monitor;
pub use crate::shared::Shared;
use crate::shutdown::Shutdown;
use crate::tls::Tls;

/// How often the monitor's record rates are sampled.
const SAMPLE_INTERVAL: Duration = Duration::from_secs(1);
/// How often the information store's log is fsynced.
const INFO_SYNC_INTERVAL: Duration = Duration::from_millis(100);
/// How long shutdown waits for sessions to say goodbye, and for HTTP requests in flight.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);
/// How long shutdown waits for the HTTP server to end once its connections are cut.
const HTTP_CUT_WAIT: Duration = Duration::from_secs(1);

/// A running server.
#[derive(Debug)]
pub struct Server {
    shared: Arc<Shared>,
    local_addr: SocketAddr,
    http_addr: SocketAddr,
    shutdown: watch::Sender<bool>,
    sessions_done: mpsc::Receiver<()>,
    tasks: Vec<JoinHandle<()>>,
    http: JoinHandle<()>,
    http_cut: watch::Sender<bool>,
    /// Where OTLP/gRPC is served, if it is.
    otlp_grpc_addr: Option<SocketAddr>,
    /// Released when the server is dropped, after `shutdown` closed the archive.
    _data_lock: DataDirGuard,
}

/// What a server reads before it binds anything: its identities, TLS files and cluster
/// secret.
#[derive(Debug)]
pub struct Preflight {
    /// The identities, and whether the server may serve without any.
    pub guard: Guard,
    /// The TLS certificate and key, when TLS is on.
    pub tls: Option<Arc<Tls>>,
    /// What guards the cluster routes: the secret, TLS to the other members.
    pub routes: RouteGuards,
}

impl Server {
    /// Reads the identities, TLS, cluster secret and mirror TLS files `config` names and
    /// checks that the server may listen where it is told to (no identities beyond loopback,
    /// or routes beyond loopback with no cluster secret, without `insecure_open`): what
    /// [`Server::start`] does first, binding nothing and writing nothing (`herald serve
    /// --check-config`).
    ///
    /// # Errors
    /// The refusal, naming the address and the setting that would allow it; an identities,
    /// TLS, secret or mirror TLS file that cannot be read or used, naming it.
    pub fn preflight(config: &Config) -> std::io::Result<Preflight> {
        let guard = crate::revoke::open_guard(config)?;
        let tls = match &config.tls {
            None => None,
            Some(settings) => Some(Arc::new(Tls::load(settings).map_err(|err| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, format!("TLS: {err}"))
            })?)),
        };
        let routes = match &config.cluster {
            None => RouteGuards::default(),
            Some(cluster) => RouteGuards::load(cluster).map_err(|message| {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, message)
            })?,
        };
        // Read again for each connection; checked here so a wrong path stops the start.
        for (index, mirror) in config.mirrors.iter().enumerate() {
            if let Some(options) = &mirror.tls {
                herald_client::tls::Tls::new(options).map_err(|err| {
                    std::io::Error::new(
                        std::io::ErrorKind::InvalidInput,
                        format!("mirror {} (to {}): TLS: {err}", index + 1, mirror.to),
                    )
                })?;
            }
        }
        Ok(Preflight { guard, tls, routes })
    }

    /// Locks the data directory, binds the configured addresses (native protocol, then
    /// HTTP) and starts accepting connections.
    ///
    /// # Errors
    /// Another server holds the data directory (naming its PID and the lock file), or the
    /// bind error, with the address, e.g. when the port is taken.
    pub async fn start(config: Config) -> std::io::Result<Server> {
        // Before binding: a server that refuses to be open leaves no port or directory.
        let Preflight { guard, tls, routes } = Server::preflight(&config)?;
        let listener = bind(config.listen, "listen").await?;
        let local_addr = listener.local_addr()?;
        let http_listener = bind(config.http, "serve HTTP").await?;
        let http_addr = http_listener.local_addr()?;
        let grpc_listener = match config.otlp_grpc {
            Some(addr) => Some(bind(addr, "serve OTLP/gRPC").await?),
            None => None,
        };
        let otlp_grpc_addr = grpc_listener
            .as_ref()
            .map(TcpListener::local_addr)
            .transpose()?;
        let syslog_sockets = match &config.syslog {
            Some(syslog) => Some(crate::syslog::listen::bind(syslog).await?),
            None => None,
        };
        // Before anything in the data directory is opened; after binding, so a server that
        // cannot have its ports leaves no directory behind.
        let data_lock = DataDirGuard::acquire(&config.data_dir)?;
        let archive = crate::archive::open(&config).await?;
        let info_dir = config.data_dir.join("info");
        let info = InfoService::open(&info_dir, archive.clone()).map_err(|err| {
            std::io::Error::other(format!(
                "cannot open the information store in {}: {err}",
                info_dir.display()
            ))
        })?;
        let (shutdown, receiver) = watch::channel(false);
        let http_limits = config.http_limits;
        let shared = Arc::new(Shared::new(Local {
            info,
            archive,
            queue_budget: Arc::new(QueueBudget::new(config.queue_budget_bytes)),
            http_connections: ConnectionLimit::new(
                http_limits.max_connections,
                http_limits.max_connections_per_address,
            ),
            connections: ConnectionLimit::new(
                config.max_connections,
                config.max_connections_per_address,
            ),
            syslog_connections: ConnectionLimit::new(
                config.max_connections,
                config.max_connections_per_address,
            ),
            reloader: crate::reload::Reloader::default(),
            syslog_doors: crate::syslog::running::Doors::default(),
            guard,
            tls: tls.clone(),
            producers: crate::producers::Producers::default(),
            mirrored: crate::mirror::Mirrored::default(),
            mirrors: std::sync::OnceLock::new(),
            syslog: Arc::default(),
            otlp: crate::otlp::OtlpStats::default(),
            storms: crate::storm::Storms::new(&config),
            monitor: Monitor::new(&config.name),
            router: Router::new(),
            config: arc_swap::ArcSwap::from_pointee(config),
            next_connection: AtomicU64::new(1),
            stopping: receiver.clone(),
        }));
        let (done, sessions_done) = mpsc::channel(1);
        let accept = tokio::spawn(crate::listener::run(
            listener,
            Arc::clone(&shared),
            Shutdown::new(receiver.clone()),
            done,
        ));
        let (http_cut, cut) = watch::channel(false);
        // The gRPC port is HTTP too: the same grace, then the same cut, at shutdown.
        let grpc = grpc_listener.map(|listener| {
            crate::otlp::grpc::run(
                listener,
                Arc::clone(&shared),
                Shutdown::new(receiver.clone()),
                cut.clone(),
            )
        });
        let http_run = crate::http::run(
            http_listener,
            Arc::clone(&shared),
            Shutdown::new(receiver.clone()),
            cut,
        );
        let http = tokio::spawn(async move {
            match grpc {
                Some(grpc) => drop(tokio::join!(http_run, grpc)),
                None => http_run.await,
            }
        });
        let sampler = tokio::spawn(sample(Arc::clone(&shared), Shutdown::new(receiver.clone())));
        let watcher = tokio::spawn(crate::revoke::watch(
            Arc::clone(&shared),
            Shutdown::new(receiver.clone()),
        ));
        let release = tokio::spawn(crate::memory::release_when_quiet(
            Arc::clone(&shared),
            Shutdown::new(receiver.clone()),
        ));
        let mut tasks = vec![accept, sampler, watcher, release];
        if let (Some(sockets), Some(syslog)) = (syslog_sockets, &shared.config().syslog) {
            shared.syslog_doors.start(&shared, syslog, sockets).await;
        }
        tasks.push(tokio::spawn(crate::reload::on_hangup(
            Arc::clone(&shared),
            Shutdown::new(receiver.clone()),
        )));
        if let Some(config) = shared.config().cluster.clone() {
            let (cluster, started) = crate::cluster::start(shared.local(), &config, routes).await?;
            let _ = shared.cluster.set(cluster);
            tasks.extend(started);
        }
        let (mirrors, feeding) = crate::mirror::source::start(&shared);
        let _ = shared.mirrors.set(mirrors);
        tasks.extend(feeding);
        if let Some(tls) = tls {
            let reload = crate::tls::watch(tls, Shutdown::new(receiver.clone()));
            tasks.push(tokio::spawn(reload));
        }
        tasks.push(tokio::spawn(sync_info(
            Arc::clone(&shared),
            Shutdown::new(receiver),
        )));
        tracing::info!(listen = %local_addr, http = %http_addr, "herald server ready");
        Ok(Server {
            shared,
            local_addr,
            http_addr,
            shutdown,
            sessions_done,
            tasks,
            http,
            http_cut,
            otlp_grpc_addr,
            _data_lock: data_lock,
        })
    }

    /// Returns the address the server listens on (useful with port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Returns the address HTTP is served on (useful with port 0).
    pub fn http_addr(&self) -> SocketAddr {
        self.http_addr
    }

    /// Writes what the archive holds and stops its writer now, blocking (for a server that
    /// is dropped without [`Server::shutdown`]: tests).
    pub fn close_archive(&self) {
        if let Some(archive) = &self.shared.archive {
            archive.close(crate::archive::CLOSE_GRACE);
        }
    }

    /// Returns the address OTLP/gRPC is served on, if it is (useful with port 0).
    pub fn otlp_grpc_addr(&self) -> Option<SocketAddr> {
        self.otlp_grpc_addr
    }

    /// Returns the syslog listeners' UDP and TCP addresses (useful with port 0).
    pub fn syslog_addrs(&self) -> (Option<SocketAddr>, Option<SocketAddr>) {
        let addresses = self.shared.syslog.addresses();
        (addresses.udp, addresses.tcp)
    }

    /// Reads the configuration again from where it came from ([`Server::set_config_source`])
    /// and applies what can change live, as SIGHUP and `RELOAD` do.
    ///
    /// # Errors
    /// [`crate::reload::ReloadError`]: no source, or the new configuration is refused (the
    /// old one stays in force).
    pub async fn reload(&self) -> Result<crate::reload::Outcome, crate::reload::ReloadError> {
        crate::reload::reload(&self.shared).await
    }

    /// Applies `config` as a reload would (what cannot change live is named, not applied).
    ///
    /// # Errors
    /// [`crate::reload::ReloadError`] when part of it cannot be put in force; then nothing
    /// changed.
    pub async fn reload_with(
        &self,
        config: Config,
    ) -> Result<crate::reload::Outcome, crate::reload::ReloadError> {
        crate::reload::apply(&self.shared, config, Vec::new()).await
    }

    /// Returns the configuration in force (what a reload last put in force).
    pub fn config_in_force(&self) -> Arc<Config> {
        self.shared.config()
    }

    /// Says where the configuration comes from, for SIGHUP and `RELOAD`.
    pub fn set_config_source(&self, source: crate::config::Source) {
        self.shared.reloader.set_source(source);
    }

    /// Says how the server's own diagnostics change level when a reload changes
    /// `log_level` (the program set up the diagnostics; without this, a new level waits for
    /// a restart).
    pub fn set_log_level_hook(&self, hook: crate::reload::LogLevelHook) {
        self.shared.reloader.set_log_level_hook(hook);
    }

    /// Returns the server's identities.
    pub fn guard(&self) -> &Guard {
        &self.shared.guard
    }

    /// Returns the server's cluster, if it is a member of one.
    pub fn cluster(&self) -> Option<&crate::cluster::Cluster> {
        self.shared.cluster.get().map(|c| c.as_ref())
    }

    /// Returns the server's TLS, if it has any.
    pub fn tls(&self) -> Option<&Tls> {
        self.shared.tls.as_deref()
    }

    /// Returns the server's counters.
    pub fn monitor(&self) -> &Monitor {
        &self.shared.monitor
    }

    /// Returns the whole monitor snapshot, every section included (what `MONITOR` answers).
    pub fn monitor_snapshot(&self) -> Vec<Field> {
        crate::snapshot::monitor_snapshot(&self.shared)
    }

    /// Stops accepting, tells every client, and waits (a few seconds at most) for the
    /// sessions and HTTP requests in flight to end.
    pub async fn shutdown(mut self) {
        let _ = self.shutdown.send(true);
        for task in self.tasks.drain(..) {
            let _ = task.await;
        }
        self.shared.syslog_doors.stop_all().await;
        let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
        let _ = tokio::time::timeout_at(deadline, self.sessions_done.recv()).await;
        if tokio::time::timeout_at(deadline, &mut self.http)
            .await
            .is_err()
        {
            // A client holding a request open does not hold up the shutdown.
            tracing::warn!("http requests still open after the grace period; cutting them");
            let _ = self.http_cut.send(true);
            if tokio::time::timeout(HTTP_CUT_WAIT, &mut self.http)
                .await
                .is_err()
            {
                self.http.abort();
            }
        }
        // Storms still under way end here: their last summaries (which count every record
        // held back) and the quotas' last reports reach the archive before it closes.
        let last = self.shared.storms.finish();
        if !last.is_empty() {
            let mut route = herald_router::RouteContext::default();
            crate::ingest::route_batch(&self.shared, &mut route, &last).await;
        }
        if let Some(archive) = self.shared.archive.clone() {
            let closing =
                tokio::task::spawn_blocking(move || archive.close(crate::archive::CLOSE_GRACE));
            let _ = closing.await;
        }
        tracing::info!("herald server stopped");
    }
}

async fn bind(addr: SocketAddr, what: &str) -> std::io::Result<TcpListener> {
    TcpListener::bind(addr)
        .await
        .map_err(|err| std::io::Error::new(err.kind(), format!("cannot {what} on {addr}: {err}")))
}

async fn sample(shared: Arc<Shared>, mut shutdown: Shutdown) {
    let mut tick = tokio::time::interval(SAMPLE_INTERVAL);
    let mut last = tokio::time::Instant::now();
    let mut route = herald_router::RouteContext::default();
    loop {
        tokio::select! {
            _ = tick.tick() => {
                shared.monitor.sample(last.elapsed());
                last = tokio::time::Instant::now();
                // Storm summaries and quota reports, due at the end of their windows.
                let due = shared.storms.tick(herald_proto::time::now_nanos());
                crate::ingest::route_batch(&shared, &mut route, &due).await;
            }
            () = shutdown.recv() => return,
        }
    }
}

/// Fsyncs the information store's log every [`INFO_SYNC_INTERVAL`] (and once more at
/// shutdown), on the blocking pool: updates are written before they are answered, and this
/// bounds what a machine crash could take.
async fn sync_info(shared: Arc<Shared>, mut shutdown: Shutdown) {
    let mut tick = tokio::time::interval(INFO_SYNC_INTERVAL);
    loop {
        let stopping = tokio::select! {
            _ = tick.tick() => false,
            () = shutdown.recv() => true,
        };
        let shared = Arc::clone(&shared);
        let _ = tokio::task::spawn_blocking(move || shared.info.sync()).await;
        if stopping {
            return;
        }
    }
}
