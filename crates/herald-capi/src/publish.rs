//! Publishing: records, messages, acknowledged sends, requests and replies.

use std::cell::RefCell;
use std::ffi::{c_char, c_int};

use ::herald_client::ClientError;
use herald_proto::{Kind, Record};

use crate::client::{ack_level_of, borrow, herald_client, timeout};
use crate::out::give;
use crate::record::{borrow as record, check_subject, herald_record};
use crate::runtime::block;
use crate::status::{guard, Failure};
use crate::strings::{optional, required};

/// Queues `record` for sending without waiting, or waits while the send buffer is full.
fn publish(c: &herald_client, record: &Record) -> Result<(), Failure> {
    match c.client.try_publish(record) {
        Err(ClientError::BufferFull(_)) => Ok(block(c.client.publish(record))??),
        done => Ok(done?),
    }
}

/// Queues the record for sending and returns; the record is copied and may be changed or
/// freed at once. While the send buffer is full (the server takes records slower than they
/// come, or failover is under way) it waits, with no limit: `herald_try_publish` never waits.
///
/// # Safety
/// `c` is NULL or a live client; `r` NULL or a live record.
#[no_mangle]
pub unsafe extern "C" fn herald_publish(c: *const herald_client, r: *const herald_record) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, r) = unsafe { (borrow(c)?, record(r)?) };
        publish(c, &r.record)
    })
}

/// As `herald_publish`, but never waits: `HERALD_E_FULL` when the send buffer is full.
///
/// # Safety
/// As `herald_publish`.
#[no_mangle]
pub unsafe extern "C" fn herald_try_publish(
    c: *const herald_client,
    r: *const herald_record,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, r) = unsafe { (borrow(c)?, record(r)?) };
        Ok(c.client.try_publish(&r.record)?)
    })
}

thread_local! {
    /// Each thread's message record, reused so that `herald_publish_message` does not
    /// allocate once its strings have grown to size.
    static MESSAGE: RefCell<Record> = RefCell::new(Record::new(Kind::Message, "_"));
}

/// Publishes a message on `subject` of type `type` (NULL: none) with `text` (NULL: none),
/// stamped now; as `herald_publish`. For fields, audiences or a priority, build a record.
///
/// # Safety
/// `c` is NULL or a live client; the strings NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_publish_message(
    c: *const herald_client,
    subject: *const c_char,
    r#type: *const c_char,
    text: *const c_char,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, subject, type_name, text) = unsafe {
            (
                borrow(c)?,
                required(subject, "subject")?,
                optional(r#type, "type")?,
                optional(text, "text")?,
            )
        };
        MESSAGE.with_borrow_mut(|message| {
            message.subject.clear();
            message.subject.push_str(subject);
            message.type_name.clear();
            message.type_name.push_str(type_name.unwrap_or_default());
            message.text.clear();
            message.text.push_str(text.unwrap_or_default());
            message.time = herald_proto::time::now_nanos();
            publish(c, message)
        })
    })
}

/// Sends the record and waits at most `timeout_ms` until the server acknowledges it at
/// `ack_level` (`HERALD_ACK_RECEIVED`, or `HERALD_ACK_STORED`: durably archived).
///
/// # Safety
/// As `herald_publish`.
#[no_mangle]
pub unsafe extern "C" fn herald_publish_sync(
    c: *const herald_client,
    r: *const herald_record,
    ack_level: c_int,
    timeout_ms: c_int,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, r) = unsafe { (borrow(c)?, record(r)?) };
        let (level, timeout) = (ack_level_of(ack_level)?, timeout(timeout_ms)?);
        block(c.client.sync_send(&r.record, level, timeout))??;
        Ok(())
    })
}

/// Sends the record as a request and waits at most `timeout_ms` for the first reply, stored
/// in `*reply` (free it with `herald_record_free`); `HERALD_E_TIMEOUT` when none came. The
/// client's first request also subscribes its reply inbox (up to 10 s), and sending waits
/// as `herald_publish` does, both before the `timeout_ms` starts.
///
/// # Safety
/// As `herald_publish`; `reply` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_request(
    c: *const herald_client,
    r: *const herald_record,
    timeout_ms: c_int,
    reply: *mut *mut herald_record,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, r) = unsafe { (borrow(c)?, record(r)?) };
        if reply.is_null() {
            return Err(Failure::invalid("reply is NULL"));
        }
        let timeout = timeout(timeout_ms)?;
        let delivered = block(c.client.request(r.record.clone(), timeout))??;
        let (seq, received) = (delivered.seq, delivered.received);
        let answer = herald_record::boxed(delivered.into_record(), seq, received);
        // SAFETY: the caller's contract.
        unsafe { give(reply, answer) }
    })
}

/// Publishes `reply` to the sender of `request` (a record a subscription delivered, with
/// its `reply_to`): its subject and correlation id are set from the request.
///
/// # Safety
/// `c` is NULL or a live client; `request` and `reply` NULL or live records.
#[no_mangle]
pub unsafe extern "C" fn herald_reply(
    c: *const herald_client,
    request: *const herald_record,
    reply: *const herald_record,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, request, reply) = unsafe { (borrow(c)?, record(request)?, record(reply)?) };
        let Some(reply_to) = &request.record.reply_to else {
            return Err(Failure::invalid(format!(
                "the record on `{}` is not a request (it has no reply_to)",
                request.record.subject
            )));
        };
        check_subject(reply_to, "reply_to")?;
        let answer = Record {
            subject: reply_to.clone(),
            id: request.record.id,
            ..reply.record.clone()
        };
        publish(c, &answer)
    })
}
