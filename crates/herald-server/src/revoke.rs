//! Opening the server's [`Guard`] (with the refusing default) and keeping it current: the
//! identities file is read again when it changes, and connections whose identity is gone
//! (or changed, or that were open when identities appeared) are closed with a reason.

use std::sync::Arc;
use std::time::Duration;

use crate::auth::Guard;
use crate::config::Config;
use crate::shared::Shared;
use crate::shutdown::Shutdown;

/// How often the identities file is looked at.
pub const IDENTITIES_POLL: Duration = Duration::from_secs(1);

/// Loads the identities, refusing to serve a non-loopback address with none unless
/// `insecure_open`.
///
/// # Errors
/// An [`std::io::Error`] whose message says what is wrong and how to go on.
pub fn open_guard(config: &Config) -> std::io::Result<Guard> {
    let security = &config.security;
    let path = security.identities_path(&config.data_dir);
    if let Some(refusal) = config
        .cluster
        .as_ref()
        .and_then(|cluster| security.refuse_routes(cluster.listen, cluster.secret_file.is_some()))
    {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            refusal,
        ));
    }
    let addresses = [
        ("the native protocol", config.listen),
        ("HTTP", config.http),
    ];
    let refusal = security.refuse_open(&addresses, &path);
    let guard = Guard::load(path, refusal.is_none())
        .map_err(|err| std::io::Error::other(format!("cannot read identities: {err}")))?;
    if let Some(refusal) = refusal.filter(|_| guard.is_open()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::PermissionDenied,
            refusal,
        ));
    }
    Ok(guard)
}

/// Reloads the identities when their file changes and closes the connections they no
/// longer admit, until shutdown.
pub async fn watch(shared: Arc<Shared>, mut shutdown: Shutdown) {
    let mut tick = tokio::time::interval(IDENTITIES_POLL);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            () = shutdown.recv() => return,
        }
        match shared.guard.reload_if_changed() {
            Ok(false) => {}
            Ok(true) => close_revoked(&shared),
            Err(err) => tracing::warn!(
                "the identities file changed but cannot be read, so the identities stay as they \
                 were: {err}"
            ),
        }
    }
}

/// Tells every connection whose access no longer holds to close.
pub fn close_revoked(shared: &Shared) {
    for connection in shared.monitor.connections() {
        let Some(access) = connection.access.get() else {
            continue;
        };
        if !shared.guard.still_valid(access) {
            connection.revoked.notify_one();
        }
    }
}
