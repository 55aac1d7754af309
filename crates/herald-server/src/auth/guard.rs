//! The server's view of its identities: loaded at start, reloaded when the file changes
//! (so `herald token new` and `herald token revoke` take effect on a running server), and
//! asked at every handshake who a token belongs to.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};

use super::store::{Identities, StoreError};
use super::Access;

/// Identities and whether the server may serve without any.
#[derive(Debug)]
pub struct Guard {
    path: PathBuf,
    /// No identities means everyone may do everything: only where the server may be open
    /// (loopback, or `insecure_open`) and it started without identities. A server that
    /// started with identities never becomes open while it runs: with the last one revoked
    /// (or the file gone) it admits no one.
    open_allowed: bool,
    identities: RwLock<Arc<Identities>>,
    /// The file's bytes when last read (`None`: there was no file).
    last: Mutex<Option<Vec<u8>>>,
}

impl Guard {
    /// Reads the identities at `path`.
    ///
    /// # Errors
    /// [`StoreError`]: the file is unreadable or not a valid identities file.
    pub fn load(path: PathBuf, may_be_open: bool) -> Result<Guard, StoreError> {
        let last = std::fs::read(&path).ok();
        let identities = Identities::load(&path)?;
        Ok(Guard {
            path,
            open_allowed: may_be_open && identities.is_empty(),
            identities: RwLock::new(Arc::new(identities)),
            last: Mutex::new(last),
        })
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

    /// Who the client is: the identity `token` (from `HELLO` or `Authorization: Bearer`)
    /// belongs to, or else the one named by `certificate`, the name in a client certificate
    /// the client CA signed (mutual TLS). Given both, they must name the same identity.
    ///
    /// # Errors
    /// A message for the client: no token where one is needed, an unknown one, a
    /// certificate naming no identity, or a token and a certificate that disagree.
    pub fn authenticate(&self, token: &str, certificate: Option<&str>) -> Result<Access, String> {
        let identities = self.current();
        if identities.is_empty() {
            if self.open_allowed {
                return Ok(Access::Open);
            }
            return Err(
                "this server has no identities left and admits no one until one is added: ask \
                 its operator for a token (`herald token new`)"
                    .to_string(),
            );
        }
        if token.is_empty() {
            if let Some(name) = certificate {
                return identities
                    .by_name(name)
                    .map(Access::Identity)
                    .ok_or_else(|| {
                        format!(
                            "the client certificate names `{name}`, which is no identity on this \
                         server: ask its operator to add it (`herald token new {name} ...`), or \
                         connect with a token"
                        )
                    });
            }
            return Err(
                "this server needs a token: give it in the URL (herald://host:7400?token=...) \
                 or as `Authorization: Bearer ...` over HTTP"
                    .to_string(),
            );
        }
        let identity = identities.authenticate(token).ok_or_else(|| {
            "unknown token: it was revoked, or mistyped (tokens start with `hrd_`)".to_string()
        })?;
        match certificate {
            Some(name) if name != identity.name => Err(format!(
                "the token belongs to `{}` but the client certificate names `{name}`: present \
                 one identity",
                identity.name
            )),
            _ => Ok(Access::Identity(identity)),
        }
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
        // The file is small: comparing its bytes misses no change, whatever the clock's
        // granularity or the file's length.
        let now = std::fs::read(&self.path).ok();
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if *last == now {
            return Ok(false);
        }
        *last = now;
        let identities = Identities::load(&self.path)?;
        *self.identities.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(identities);
        Ok(true)
    }
}
