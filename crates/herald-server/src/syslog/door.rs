//! The syslog listeners running: [`Doors`]. A reload may start one, stop one, move one to
//! another address, or restart one with a new message size; a listener whose address stays
//! keeps its socket (datagrams waiting in it are not lost), and TCP connections already open
//! go on until they end.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::net::{TcpListener, UdpSocket};
use tokio::sync::watch;

use super::listen::{self, Sockets};
use super::running::{Door, Doors};
use super::{Addresses, Ingest};
use crate::config::SyslogConfig;
use crate::shared::Shared;

/// The sockets a new configuration needs bound, bound before anything changes: a reload
/// that cannot have them changes nothing.
#[derive(Debug, Default)]
pub struct Prepared {
    config: Option<SyslogConfig>,
    sockets: Option<Sockets>,
}

impl Doors {
    /// Starts the listeners of `config` on `sockets` (bound before the server's state was).
    pub async fn start(&self, shared: &Arc<Shared>, config: &SyslogConfig, sockets: Sockets) {
        let prepared = Prepared {
            config: Some(config.clone()),
            sockets: Some(sockets),
        };
        self.commit(shared, prepared).await;
    }

    /// Binds what `new` needs and the running listeners do not have.
    ///
    /// # Errors
    /// An address that cannot be bound, named.
    pub async fn prepare(&self, new: Option<&SyslogConfig>) -> std::io::Result<Prepared> {
        let running = self.running.lock().await;
        let Some(new) = new else {
            return Ok(Prepared::default());
        };
        let wanted = SyslogConfig {
            udp: new.udp.filter(|addr| !same(running.udp.as_ref(), *addr)),
            tcp: new.tcp.filter(|addr| !same(running.tcp.as_ref(), *addr)),
            ..new.clone()
        };
        Ok(Prepared {
            config: Some(new.clone()),
            sockets: Some(listen::bind(&wanted).await?),
        })
    }

    /// Puts `prepared` in force: listeners no longer wanted stop, moved ones start on their
    /// new sockets, ones whose message size changed restart on their own socket.
    pub async fn commit(&self, shared: &Arc<Shared>, prepared: Prepared) {
        let mut running = self.running.lock().await;
        let config = prepared.config;
        let mut sockets = prepared.sockets.unwrap_or(Sockets {
            udp: None,
            tcp: None,
        });
        let max = config.as_ref().map_or(0, |c| c.max_message_bytes);
        let want_udp = config.as_ref().and_then(|c| c.udp);
        let want_tcp = config.as_ref().and_then(|c| c.tcp);
        let udp = reconcile(
            running.udp.take(),
            want_udp,
            sockets.udp.take(),
            max,
            |addr, s| start_udp(shared, addr, max, s),
        );
        running.udp = udp.await;
        let tcp = reconcile(
            running.tcp.take(),
            want_tcp,
            sockets.tcp.take(),
            max,
            |addr, l| start_tcp(shared, addr, max, l),
        );
        running.tcp = tcp.await;
        shared.syslog.set_addresses(Addresses {
            udp: running.udp.as_ref().and_then(|d| d.local),
            tcp: running.tcp.as_ref().and_then(|d| d.local),
            udp_inode: running.udp.as_ref().and_then(|d| d.inode),
        });
        let now = shared.syslog.addresses();
        if now.udp.is_some() || now.tcp.is_some() {
            tracing::info!(udp = ?now.udp, tcp = ?now.tcp, "syslog listening");
        }
    }

    /// Stops every listener and waits for them (the server stops).
    pub async fn stop_all(&self) {
        let mut running = self.running.lock().await;
        if let Some(door) = running.udp.take() {
            let _ = stop(door).await;
        }
        if let Some(door) = running.tcp.take() {
            let _ = stop(door).await;
        }
    }
}

/// One listener's next state: kept as it is, restarted on its own socket (a new message
/// size), or stopped and replaced by one on the `fresh` socket (a new address, or none).
async fn reconcile<S>(
    old: Option<Door<S>>,
    want: Option<SocketAddr>,
    fresh: Option<S>,
    max: usize,
    start: impl FnOnce(SocketAddr, S) -> Door<S>,
) -> Option<Door<S>> {
    match (old, want) {
        (Some(door), Some(addr)) if door.configured == addr => {
            if door.max == max {
                Some(door)
            } else {
                stop(door).await.map(|socket| start(addr, socket))
            }
        }
        (old, want) => {
            if let Some(door) = old {
                let _ = stop(door).await;
            }
            Some(start(want?, fresh?))
        }
    }
}

fn same<S>(door: Option<&Door<S>>, addr: SocketAddr) -> bool {
    door.is_some_and(|d| d.configured == addr)
}

async fn stop<S>(door: Door<S>) -> Option<S> {
    let _ = door.stop.send(true);
    door.task.await.ok()
}

fn start_udp(
    shared: &Arc<Shared>,
    configured: SocketAddr,
    max: usize,
    socket: UdpSocket,
) -> Door<UdpSocket> {
    let local = socket.local_addr().ok();
    let inode = super::udp::socket_inode(&socket);
    let (stop, stopped) = watch::channel(false);
    let ingest = Ingest::new(Arc::clone(shared), Arc::clone(&shared.syslog));
    let until = shared.shutdown_signal().or(stopped);
    let task = tokio::spawn(super::udp::listen(socket, ingest, max, until));
    Door {
        configured,
        max,
        stop,
        task,
        local,
        inode,
    }
}

fn start_tcp(
    shared: &Arc<Shared>,
    configured: SocketAddr,
    max: usize,
    listener: TcpListener,
) -> Door<TcpListener> {
    let local = listener.local_addr().ok();
    let (stop, stopped) = watch::channel(false);
    let shutdown = shared.shutdown_signal();
    let until = shutdown.or(stopped);
    let task = tokio::spawn(listen::accept(
        listener,
        Arc::clone(shared),
        Arc::clone(&shared.syslog),
        max,
        until,
        shutdown,
    ));
    Door {
        configured,
        max,
        stop,
        task,
        local,
        inode: None,
    }
}
