//! The syslog listeners' state, [`Doors`]: what runs, on which address, and how to stop it.
//! Starting, stopping and moving them is `door.rs`'s.

use std::net::SocketAddr;

use tokio::net::{TcpListener, UdpSocket};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// The running listeners.
#[derive(Debug, Default)]
pub struct Doors {
    pub(super) running: tokio::sync::Mutex<Running>,
}

#[derive(Debug, Default)]
pub(super) struct Running {
    pub(super) udp: Option<Door<UdpSocket>>,
    pub(super) tcp: Option<Door<TcpListener>>,
}

/// One listener: the address it was configured with, its message size, and its task, which
/// gives the socket back when told to stop.
#[derive(Debug)]
pub(super) struct Door<S> {
    pub(super) configured: SocketAddr,
    pub(super) max: usize,
    pub(super) stop: watch::Sender<bool>,
    pub(super) task: JoinHandle<S>,
    /// The address bound (the configured port may be 0).
    pub(super) local: Option<SocketAddr>,
    /// The UDP socket's inode, for the kernel's count of what it dropped.
    pub(super) inode: Option<u64>,
}
