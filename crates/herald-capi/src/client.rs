//! `herald_client`: connect, close, flush, the priority threshold, monitor data.

use std::ffi::{c_char, c_int};
use std::time::Duration;

use tokio::time::Instant;

use ::herald_client::{Client, ClientOptions, Logger, LoggerOptions};
use herald_proto::frame::AckLevel;
use herald_proto::{Kind, Record};

use crate::out::{self, give};
use crate::record::{check_subject, herald_record, priority_of};
use crate::runtime::{block, runtime};
use crate::status::{guard, Failure, HERALD_E_INVALID};
use crate::strings::{optional, required};

/// Acknowledgement level: the server has the records and has routed them.
pub const HERALD_ACK_RECEIVED: c_int = 1;
/// Acknowledgement level: the records are durably in the server's archive.
pub const HERALD_ACK_STORED: c_int = 2;

/// The subject of the logger's own records (drop reports) when the client's name is not a
/// subject.
const DEFAULT_LOGGER_SUBJECT: &str = "herald.c";

/// How long `herald_close` waits for what is still buffered.
const CLOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// A connection to Herald (with failover to the other servers of its URL) and its logger.
/// Opaque; every function may be called from any thread.
// Cache lines of its own: every log call reads it, and a neighbour on the heap that another
// thread writes (the I/O tasks' state) would make each call miss the cache.
#[repr(align(128))]
pub struct herald_client {
    pub(crate) client: Client,
    pub(crate) logger: Logger,
}

/// Borrows the client behind `c`.
///
/// # Safety
/// `c` is NULL or a client from `herald_connect` not yet closed.
pub unsafe fn borrow<'a>(c: *const herald_client) -> Result<&'a herald_client, Failure> {
    // SAFETY: the caller's contract.
    unsafe { c.as_ref() }.ok_or_else(|| Failure::invalid("client is NULL"))
}

/// The time left until `deadline` (zero once it passed).
fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// A timeout in ms from C.
pub fn timeout(ms: c_int) -> Result<Duration, Failure> {
    u64::try_from(ms)
        .map(Duration::from_millis)
        .map_err(|_| Failure::invalid(format!("timeout of {ms} ms is negative")))
}

/// An acknowledgement level from C.
pub fn ack_level_of(level: c_int) -> Result<AckLevel, Failure> {
    match level {
        HERALD_ACK_RECEIVED => Ok(AckLevel::Received),
        HERALD_ACK_STORED => Ok(AckLevel::Stored),
        _ => Err(Failure::invalid(format!(
            "acknowledgement level {level} is not HERALD_ACK_RECEIVED or HERALD_ACK_STORED"
        ))),
    }
}

/// How a client connects and logs: fill it with `herald_options_init`, change what you
/// need, and pass it to `herald_connect_with`. Zero (or NULL) leaves a setting at its default.
#[repr(C)]
pub struct herald_options {
    /// `sizeof(herald_options)`, set by `herald_options_init`: lets later versions add
    /// settings without breaking programs built against this one.
    pub size: usize,
    /// Name shown by the server's monitor (the URL's `?name=` overrides it).
    pub name: *const c_char,
    /// Subject of the logger's records when a log call names none, and of its drop reports
    /// (default: the name when it is a valid subject, else `herald.c`).
    pub log_subject: *const c_char,
    /// Lowest priority the logger sends (default `HERALD_INFO`).
    pub log_threshold: c_int,
    /// Records the logger buffers before log calls drop (default 16,384).
    pub log_buffer_records: usize,
    /// Time allowed per server to connect and shake hands, ms (default 5,000).
    pub connect_timeout_ms: c_int,
    /// How long to keep trying other servers after the connection fails, ms (default
    /// 30,000; -1 turns failover off).
    pub reconnect_timeout_ms: c_int,
    /// Bytes buffered for sending (and kept until acknowledged) before `herald_publish`
    /// waits (default 8 MiB).
    pub send_buffer_bytes: usize,
    /// The logger's disk buffer (docs/configuration.md, "Disk buffer"): a directory, one
    /// producer per directory, where the logger keeps what it cannot deliver while no
    /// server answers, and sends it, oldest first, when one does (also at the next start).
    /// The logger then has a connection of its own. NULL (default): no disk buffer.
    pub log_buffer_dir: *const c_char,
    /// Bytes the disk buffer may hold (default 256 MiB; at least 64 KiB); past it the
    /// lowest priorities are shed first, and counted.
    pub log_buffer_quota: usize,
}

/// Fills `*options` with the defaults. NULL is fine (nothing happens).
///
/// # Safety
/// `options` is NULL or points to writable storage for a `herald_options`.
#[no_mangle]
pub unsafe extern "C" fn herald_options_init(options: *mut herald_options) {
    if options.is_null() {
        return;
    }
    let defaults = herald_options {
        size: std::mem::size_of::<herald_options>(),
        name: std::ptr::null(),
        log_subject: std::ptr::null(),
        log_threshold: 0,
        log_buffer_records: 0,
        connect_timeout_ms: 0,
        reconnect_timeout_ms: 0,
        send_buffer_bytes: 0,
        log_buffer_dir: std::ptr::null(),
        log_buffer_quota: 0,
    };
    // SAFETY: not NULL, writable by the caller's contract.
    unsafe { options.write(defaults) };
}

/// A setting in ms: 0 keeps `default`, -1 is zero (off) where `off` allows it.
fn millis(ms: c_int, default: Duration, what: &str, off: bool) -> Result<Duration, Failure> {
    match ms {
        0 => Ok(default),
        -1 if off => Ok(Duration::ZERO),
        ms if ms > 0 => Ok(Duration::from_millis(ms as u64)),
        ms => Err(Failure::invalid(format!("{what} of {ms} ms is negative"))),
    }
}

/// Connects to the first server of `url` that answers (`herald://host:port`, several
/// servers separated by commas for failover, `herald+tls://…` for TLS, `?token=…`) under
/// `name` (shown by the server's monitor; the URL's `?name=` overrides it; NULL and no
/// `?name=`: the program's file name), and stores the client in `*out`. The logger's own
/// subject is `name` when that is a valid subject, else `herald.c`. Close it with
/// `herald_close`.
///
/// # Safety
/// `url` and `name` are NULL or NUL-terminated strings; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_connect(
    url: *const c_char,
    name: *const c_char,
    out: *mut *mut herald_client,
) -> c_int {
    let mut options = std::mem::MaybeUninit::<herald_options>::uninit();
    // SAFETY: `options` is writable; herald_options_init fills every field.
    let mut options = unsafe {
        herald_options_init(options.as_mut_ptr());
        options.assume_init()
    };
    options.name = name;
    // SAFETY: the caller's contract.
    unsafe { herald_connect_with(url, &options, out) }
}

/// Connects as `herald_connect` does, with `options` (NULL: the defaults).
///
/// # Safety
/// `url` is NULL or a NUL-terminated string; `options` NULL or filled by
/// `herald_options_init` (its strings NULL or NUL-terminated); `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_connect_with(
    url: *const c_char,
    options: *const herald_options,
    out: *mut *mut herald_client,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let url = unsafe { required(url, "url") }?;
        out::check(out)?;
        // SAFETY: the caller's contract.
        let settings = unsafe { options.as_ref() };
        if let Some(settings) = settings {
            if settings.size != std::mem::size_of::<herald_options>() {
                return Err(Failure::invalid(format!(
                    "options.size is {}, not sizeof(herald_options) {}: fill the options with herald_options_init",
                    settings.size,
                    std::mem::size_of::<herald_options>()
                )));
            }
        }
        let defaults = ClientOptions::default();
        let mut client_options = ClientOptions::default();
        let mut logger_options = LoggerOptions::new(DEFAULT_LOGGER_SUBJECT);
        if let Some(s) = settings {
            // SAFETY: the caller's contract.
            let (name, log_subject) = unsafe {
                (
                    optional(s.name, "options.name")?,
                    optional(s.log_subject, "options.log_subject")?,
                )
            };
            if let Some(name) = name {
                client_options.name = name.to_string();
                if check_subject(name, "name").is_ok() {
                    logger_options.subject = name.to_string();
                }
            }
            if let Some(subject) = log_subject {
                check_subject(subject, "options.log_subject")?;
                logger_options.subject = subject.to_string();
            }
            if s.log_threshold != 0 {
                logger_options.threshold = priority_of(s.log_threshold)?;
            }
            if s.log_buffer_records != 0 {
                logger_options.buffer_records = s.log_buffer_records;
            }
            // SAFETY: the caller's contract.
            let buffer_dir = unsafe { optional(s.log_buffer_dir, "options.log_buffer_dir")? };
            logger_options.buffer_dir = buffer_dir.map(std::path::PathBuf::from);
            if s.log_buffer_quota != 0 {
                logger_options.buffer_quota = s.log_buffer_quota as u64;
            }
            client_options.connect_timeout = millis(
                s.connect_timeout_ms,
                defaults.connect_timeout,
                "options.connect_timeout_ms",
                false,
            )?;
            client_options.reconnect_timeout = millis(
                s.reconnect_timeout_ms,
                defaults.reconnect_timeout,
                "options.reconnect_timeout_ms",
                true,
            )?;
            if s.send_buffer_bytes != 0 {
                client_options.outbox_bytes = s.send_buffer_bytes;
            }
        }
        let own = logger_options
            .buffer_dir
            .is_some()
            .then(|| client_options.clone());
        let client = block(Client::connect_with(url, client_options))??;
        let logger = {
            let _inside = runtime().enter();
            match own {
                // A disk buffer numbers its records itself: the logger connects on its own.
                Some(options) => Logger::connect(url, options, logger_options),
                None => Logger::new(&client, logger_options),
            }
            .map_err(|e| Failure::new(HERALD_E_INVALID, e))?
        };
        // SAFETY: the caller's contract.
        unsafe { give(out, Box::new(herald_client { client, logger })) }
    })
}

/// Sends what is still buffered (waiting at most 5 s in all), closes the connection and
/// frees the client. Subscriptions made on it receive nothing more (events that had arrived
/// are still delivered or polled); free them with `herald_unsubscribe`. NULL is fine. Returns the flush's status: the client is freed
/// either way.
///
/// # Safety
/// `c` is NULL or a client from `herald_connect` not yet closed; no other thread uses it
/// during or after the call.
#[no_mangle]
pub unsafe extern "C" fn herald_close(c: *mut herald_client) -> c_int {
    if c.is_null() {
        return 0;
    }
    // SAFETY: made by Box::into_raw in `herald_connect`, closed once by the caller's contract.
    let client = unsafe { Box::from_raw(c) };
    guard(move || {
        let herald_client { client, logger } = *client;
        let closed = block(async move {
            let deadline = Instant::now() + CLOSE_TIMEOUT;
            let logged = logger.close(CLOSE_TIMEOUT).await;
            let flushed = client.close(left(deadline)).await;
            logged.and(flushed)
        })?;
        Ok(closed?)
    })
}

/// Waits at most `timeout_ms` until the server has acknowledged at `ack_level`
/// (`HERALD_ACK_RECEIVED` or `HERALD_ACK_STORED`) everything published and logged on this
/// client so far.
///
/// # Safety
/// `c` is NULL or a live client.
#[no_mangle]
pub unsafe extern "C" fn herald_flush(
    c: *const herald_client,
    ack_level: c_int,
    timeout_ms: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let (level, timeout) = (ack_level_of(ack_level)?, timeout(timeout_ms)?);
        block(async {
            // The logger's flush hands its records over and waits for `received`; `stored`
            // needs one more acknowledgement, in the time left.
            let deadline = Instant::now() + timeout;
            c.logger.flush(timeout).await?;
            match level {
                AckLevel::Received => Ok(()),
                _ => c.client.flush_at(level, left(deadline)).await,
            }
        })??;
        Ok(())
    })
}

/// Sets the lowest priority the client's logger sends (`herald_log`, `HERALD_LOG`); records
/// below it cost only a comparison. Takes effect at once on every thread.
///
/// # Safety
/// `c` is NULL or a live client.
#[no_mangle]
pub unsafe extern "C" fn herald_set_threshold(c: *const herald_client, threshold: c_int) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        c.logger.set_threshold(priority_of(threshold)?);
        Ok(())
    })
}

/// Returns the lowest priority the client's logger sends (0 for a NULL client).
///
/// # Safety
/// `c` is NULL or a live client.
#[no_mangle]
pub unsafe extern "C" fn herald_threshold(c: *const herald_client) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { c.as_ref() }.map_or(0, |c| c.logger.threshold() as c_int)
}

/// Stores in `*out` how many of the logger's records were lost so far (buffer full, send
/// buffer full, closed); each loss is also reported to the server.
///
/// # Safety
/// `c` is NULL or a live client; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_log_dropped(c: *const herald_client, out: *mut u64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        // SAFETY: the caller's contract.
        unsafe { out::put(out, c.logger.dropped()) }
    })
}

/// Stores in `*out` how many records the client held without an acknowledgement when its
/// connection ended for good — failover gave up (`reconnect_timeout_ms`), the server refused
/// the client for good, or `herald_close` came before they were acknowledged: records it
/// cannot say reached a server. 0 while the connection runs.
///
/// # Safety
/// `c` is NULL or a live client; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_abandoned(c: *const herald_client, out: *mut u64) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        // SAFETY: the caller's contract.
        unsafe { out::put(out, c.client.abandoned()) }
    })
}

/// Asks the server for its monitor data (clients, subscriptions, rates, queue depths,
/// drops …) and stores it in `*out` as a record whose fields are the counters: read one
/// with `herald_record_field(r, "records_in", &field)`. Free it with `herald_record_free`.
///
/// # Safety
/// `c` is NULL or a live client; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_monitor(
    c: *const herald_client,
    out: *mut *mut herald_record,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let data = block(c.client.monitor())??;
        let record = Record {
            fields: data,
            ..Record::new(Kind::Message, "monitor")
        };
        // SAFETY: the caller's contract.
        unsafe { give(out, herald_record::boxed(record, 0, 0)) }
    })
}

/// Copies the `host:port` of the server the client is connected to (it changes on failover)
/// into `buf` of `len` bytes, NUL-terminated; `HERALD_E_INVALID` if it does not fit.
///
/// # Safety
/// `c` is NULL or a live client; `buf` points to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn herald_server(
    c: *const herald_client,
    buf: *mut c_char,
    len: usize,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let server = c.client.server();
        if buf.is_null() || len <= server.len() {
            return Err(Failure::invalid(format!(
                "buf of {len} bytes cannot hold `{server}` and its NUL"
            )));
        }
        // SAFETY: `len` > server.len() writable bytes by the caller's contract.
        unsafe {
            std::ptr::copy_nonoverlapping(server.as_ptr(), buf.cast(), server.len());
            *buf.add(server.len()) = 0;
        }
        Ok(())
    })
}
