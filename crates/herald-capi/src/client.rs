//! `herald_client`: connect, close, flush, the priority threshold, monitor data.

use std::ffi::{c_char, c_int};
use std::time::Duration;

use ::herald_client::{Client, ClientOptions, Logger, LoggerOptions};
use herald_proto::frame::AckLevel;
use herald_proto::{Kind, Record};

use crate::record::{check_subject, give, herald_record, priority};
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

/// A timeout in ms from C.
pub fn timeout(ms: c_int) -> Result<Duration, Failure> {
    u64::try_from(ms)
        .map(Duration::from_millis)
        .map_err(|_| Failure::invalid(format!("timeout of {ms} ms is negative")))
}

/// An acknowledgement level from C.
pub fn ack_level(level: c_int) -> Result<AckLevel, Failure> {
    match level {
        HERALD_ACK_RECEIVED => Ok(AckLevel::Received),
        HERALD_ACK_STORED => Ok(AckLevel::Stored),
        _ => Err(Failure::invalid(format!(
            "acknowledgement level {level} is not HERALD_ACK_RECEIVED or HERALD_ACK_STORED"
        ))),
    }
}

/// Connects to the first server of `url` that answers (`herald://host:port`, several
/// servers separated by commas for failover, `herald+tls://…` for TLS, `?token=…`) under
/// `name` (shown by the server's monitor; NULL for the URL's `?name=` or none), and stores
/// the client in `*out`. Close it with `herald_close`.
///
/// # Safety
/// `url` and `name` are NULL or NUL-terminated strings; `out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_connect(
    url: *const c_char,
    name: *const c_char,
    out: *mut *mut herald_client,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (url, name) = unsafe { (required(url, "url")?, optional(name, "name")?) };
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        let options = ClientOptions {
            name: name.unwrap_or_default().to_string(),
            ..ClientOptions::default()
        };
        let client = block(Client::connect_with(url, options))??;
        let subject = match name {
            Some(name) if check_subject(name, "name").is_ok() => name,
            _ => DEFAULT_LOGGER_SUBJECT,
        };
        let logger = {
            let _inside = runtime().enter();
            Logger::new(&client, LoggerOptions::new(subject))
                .map_err(|e| Failure::new(HERALD_E_INVALID, e))?
        };
        let boxed = Box::new(herald_client { client, logger });
        // SAFETY: checked not NULL; writable by the caller's contract.
        unsafe { *out = Box::into_raw(boxed) };
        Ok(())
    })
}

/// Sends what is still buffered (waiting at most 5 s), closes the connection and frees the
/// client. Subscriptions made on it deliver nothing more; free them with
/// `herald_unsubscribe`. NULL is fine. Returns the flush's status: the client is freed
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
            let logged = logger.close(CLOSE_TIMEOUT).await;
            let flushed = client.close(CLOSE_TIMEOUT).await;
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
    ack_level_: c_int,
    timeout_ms: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let (level, timeout) = (ack_level(ack_level_)?, timeout(timeout_ms)?);
        block(async {
            c.logger.flush(timeout).await?;
            c.client.flush_at(level, timeout).await
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
        c.logger.set_threshold(priority(threshold)?);
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
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        // SAFETY: checked not NULL, writable by the caller's contract.
        unsafe { *out = c.logger.dropped() };
        Ok(())
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
