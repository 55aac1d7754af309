//! Where a logger's records go: the client it was given ([`Logger::new`](super::Logger::new)),
//! or a connection it makes and keeps itself ([`Logger::connect`](super::Logger::connect)).
//!
//! A logger that connects itself does not need a server at its start: a task tries the URL
//! again and again (with backoff, up to [`MAX_BACKOFF`]) while the records wait in the
//! buffer, or go to the disk buffer. Its client fails over without end (the options'
//! `reconnect_timeout` is not used), so that nothing it sent and no server acknowledged is
//! dropped; with a disk buffer it numbers its records by the buffer's numbering.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;

use crate::numbering::Numbering;
use crate::sync::lock;
use crate::{Client, ClientOptions};

/// First pause after a failed connection attempt; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
/// Longest pause between two connection attempts.
pub(crate) const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long an own connection keeps failing over: for all practical purposes, for ever.
const ENDLESS: Duration = Duration::from_secs(100 * 365 * 24 * 3600);

/// What the logger's handles see of the link: the client now, and whether the disk buffer
/// holds records no server acknowledged (a flush waits for both).
#[derive(Default)]
pub(crate) struct LinkState {
    client: Mutex<Option<Client>>,
    pub(crate) disk_pending: AtomicBool,
}

impl LinkState {
    /// Returns the client now, if any.
    pub(crate) fn client(&self) -> Option<Client> {
        lock(&self.client).clone()
    }

    /// Returns true while the disk buffer holds records not acknowledged.
    pub(crate) fn disk_pending(&self) -> bool {
        self.disk_pending.load(Ordering::Acquire)
    }
}

/// How the background side reaches a server.
pub(crate) struct Link {
    pub(crate) state: Arc<LinkState>,
    /// The client it uses now (also in `state`, for the handles).
    client: Option<Client>,
    /// How to connect, for a logger that makes its own connection.
    own: Option<Own>,
    /// Own connections that gave up, kept until the background side takes what they held
    /// without an acknowledgement ([`Link::take_failed`]).
    failed: Vec<Client>,
}

struct Own {
    url: String,
    options: ClientOptions,
    numbering: Option<Numbering>,
    attempt: Option<JoinHandle<Client>>,
}

impl Drop for Own {
    fn drop(&mut self) {
        if let Some(attempt) = &self.attempt {
            attempt.abort();
        }
    }
}

impl Link {
    /// Returns a link over the client a logger was given.
    pub(crate) fn given(client: Client) -> (Link, Arc<LinkState>) {
        let state = Arc::new(LinkState::default());
        *lock(&state.client) = Some(client.clone());
        let link = Link {
            state: Arc::clone(&state),
            client: Some(client),
            own: None,
            failed: Vec::new(),
        };
        (link, state)
    }

    /// Returns a link that connects to `url` itself, numbering by `numbering` when given.
    pub(crate) fn own(
        url: String,
        mut options: ClientOptions,
        numbering: Option<Numbering>,
    ) -> (Link, Arc<LinkState>) {
        options.reconnect_timeout = ENDLESS;
        let state = Arc::new(LinkState::default());
        let own = Own {
            url,
            options,
            numbering,
            attempt: None,
        };
        let link = Link {
            state: Arc::clone(&state),
            client: None,
            own: Some(own),
            failed: Vec::new(),
        };
        (link, state)
    }

    /// Returns the client to send through, if one is connected or failing over; starts a
    /// connection attempt when there is none (on the current runtime).
    pub(crate) async fn client(&mut self) -> Option<&Client> {
        let Some(own) = &mut self.own else {
            return self.client.as_ref();
        };
        if self.client.as_ref().is_some_and(|c| c.error().is_some()) {
            // It gave up: connect anew, and keep it for what it still holds.
            self.failed.extend(self.client.take());
            *lock(&self.state.client) = None;
        }
        if self.client.is_none() {
            match own.attempt.take() {
                Some(attempt) if attempt.is_finished() => {
                    if let Ok(client) = attempt.await {
                        *lock(&self.state.client) = Some(client.clone());
                        self.client = Some(client);
                    }
                }
                Some(attempt) => own.attempt = Some(attempt),
                None => own.attempt = Some(tokio::spawn(connect(own.clone_target()))),
            }
        }
        self.client.as_ref()
    }

    /// Takes the own connections that gave up since the last call: what they hold without
    /// an acknowledgement is the background side's to keep or count.
    pub(crate) fn take_failed(&mut self) -> Vec<Client> {
        std::mem::take(&mut self.failed)
    }

    /// Returns true for a logger that makes its own connection (and may be connecting).
    pub(crate) fn connects_itself(&self) -> bool {
        self.own.is_some()
    }

    /// Returns the client in use now, without starting a connection attempt.
    pub(crate) fn current(&self) -> Option<&Client> {
        self.client.as_ref()
    }

    /// Returns true if records sent now reach a server: a client is there and connected.
    pub(crate) async fn is_up(&mut self) -> bool {
        self.client().await.is_some_and(Client::is_connected)
    }
}

impl Own {
    fn clone_target(&self) -> (String, ClientOptions, Option<Numbering>) {
        (
            self.url.clone(),
            self.options.clone(),
            self.numbering.clone(),
        )
    }
}

/// Tries `url` until a server answers.
async fn connect((url, options, numbering): (String, ClientOptions, Option<Numbering>)) -> Client {
    let mut backoff = FIRST_BACKOFF;
    let mut warned = false;
    loop {
        let attempt = Client::connect_numbered(&url, options.clone(), numbering.clone()).await;
        match attempt {
            Ok(client) => return client,
            Err(error) if !warned => {
                tracing::warn!(%error, "herald logger cannot connect yet; trying again");
                warned = true;
            }
            Err(error) => tracing::debug!(%error, "herald logger connection attempt failed"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(MAX_BACKOFF);
    }
}
