//! The server's view of its identities: loaded at start, reloaded when the file changes
//! (so `herald token new` and `herald token revoke` take effect on a running server), and
//! asked at every handshake who a token belongs to.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use std::time::SystemTime;

use super::store::{Identities, StoreError};
use super::Access;

/// Identities and whether the server may serve without any.
#[derive(Debug)]
pub struct Guard {
    path: PathBuf,
    /// No identities means everyone may do everything: only where the server may be open
    /// (loopback, or `insecure_open`).
    open_allowed: bool,
    identities: RwLock<Arc<Identities>>,
    /// The file's modification time and length when last read.
    stamp: Mutex<Option<(SystemTime, u64)>>,
}

impl Guard {
    /// Reads the identities at `path`.
    ///
    /// # Errors
    /// [`StoreError`]: the file is unreadable or not a valid identities file.
    pub fn load(path: PathBuf, open_allowed: bool) -> Result<Guard, StoreError> {
        let stamp = stamp(&path);
        let identities = Identities::load(&path)?;
        Ok(Guard {
            path,
            open_allowed,
            identities: RwLock::new(Arc::new(identities)),
            stamp: Mutex::new(stamp),
        })
    }

    /// The identities file.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }

    fn current(&self) -> Arc<Identities> {
        Arc::clone(&self.identities.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Says who the server serves, for its banner.
    pub fn describe(&self) -> String {
        match self.current().len() {
            0 => "no identities: every program that reaches it may do everything".to_string(),
            n => format!(
                "{n} identit{} in {}: every client needs a token",
                if n == 1 { "y" } else { "ies" },
                self.path.display()
            ),
        }
    }

    /// Returns true if the server serves everyone (no identities).
    pub fn is_open(&self) -> bool {
        self.current().is_empty()
    }

    /// Who `token` (from `HELLO` or `Authorization: Bearer`) is.
    ///
    /// # Errors
    /// A message for the client: no token where one is needed, or an unknown one.
    pub fn authenticate(&self, token: &str) -> Result<Access, String> {
        let identities = self.current();
        if identities.is_empty() {
            if self.open_allowed {
                return Ok(Access::Open);
            }
            return Err(
                "this server has no identities left and is not open: ask its operator for a \
                 token (`herald token new`)"
                    .to_string(),
            );
        }
        if token.is_empty() {
            return Err(
                "this server needs a token: give it in the URL (herald://host:7400?token=...) \
                 or as `Authorization: Bearer ...` over HTTP"
                    .to_string(),
            );
        }
        identities
            .authenticate(token)
            .map(Access::Identity)
            .ok_or_else(|| {
                "unknown token: it was revoked, or mistyped (tokens start with `hrd_`)".to_string()
            })
    }

    /// Returns true if `access` still holds: its identity was not revoked or changed, or,
    /// for an open connection, the server is still open.
    pub fn still_valid(&self, access: &Access) -> bool {
        let identities = self.current();
        match access {
            Access::Open => identities.is_empty() && self.open_allowed,
            Access::Identity(identity) => identities.still_grants(identity),
        }
    }

    /// Reads the file again if it changed since it was last read; returns true if it did.
    /// A file that no longer reads leaves the identities as they were.
    ///
    /// # Errors
    /// [`StoreError`] when the changed file is not valid.
    pub fn reload_if_changed(&self) -> Result<bool, StoreError> {
        let now = stamp(&self.path);
        let mut last = self.stamp.lock().unwrap_or_else(|p| p.into_inner());
        if *last == now {
            return Ok(false);
        }
        *last = now;
        let identities = Identities::load(&self.path)?;
        *self.identities.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(identities);
        Ok(true)
    }
}

fn stamp(path: &std::path::Path) -> Option<(SystemTime, u64)> {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}
