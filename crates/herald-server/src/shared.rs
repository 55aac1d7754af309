//! [`Shared`]: what every session, listener and task of a server shares — what the server
//! holds on its own ([`Local`]: the router, the monitor, the information service, the
//! archive, the configuration in force…) and the cluster it is a member of. `server.rs`
//! builds it at start-up; the modules that take it depend on this file, never on the
//! start-up code. The cluster's code takes [`Local`] alone, so that nothing below the
//! sessions depends on the cluster and the cluster on nothing above it.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

use crate::cluster::Cluster;
use crate::local::Local;

/// What every session shares: this server's own parts, read through it as its own fields
/// (`shared.router`), and its cluster.
#[derive(Debug)]
pub struct Shared {
    local: Arc<Local>,
    /// The cluster this server is a member of, once its route listener is up.
    pub cluster: OnceLock<Arc<Cluster>>,
}

impl Shared {
    /// Returns shared state over `local`, in no cluster yet.
    pub fn new(local: Local) -> Shared {
        Shared {
            local: Arc::new(local),
            cluster: OnceLock::new(),
        }
    }

    /// Returns this server's own parts, as the cluster's tasks keep them.
    pub fn local(&self) -> &Arc<Local> {
        &self.local
    }
}

impl Deref for Shared {
    type Target = Local;

    fn deref(&self) -> &Local {
        &self.local
    }
}
