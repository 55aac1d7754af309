//! Subscriptions: records (and gap and failover notices) delivered to a callback on a
//! thread of the subscription's own, or taken by polling.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{JoinHandle, ThreadId};

use std::future::Future;

use ::herald_client::{ClientError, Event, Subscription};
use herald_proto::Filter;
use tokio::sync::Notify;

use crate::client::{borrow, herald_client, timeout};
use crate::event::{herald_event, OwnedEvent};
use crate::out;
use crate::runtime::{block, runtime};
use crate::status::{guard, Failure, HERALD_E_CLOSED, HERALD_E_TIMEOUT};
use crate::strings::optional;

/// A callback for a subscription's events: `event` is valid until it returns; `user_data`
/// is what was given to the subscribe call.
pub type herald_callback =
    Option<unsafe extern "C" fn(event: *const herald_event, user_data: *mut c_void)>;

/// A subscription. Opaque; end it with `herald_unsubscribe`.
pub struct herald_subscription {
    mode: Mode,
}

enum Mode {
    /// Events wait for `herald_poll`.
    Polling(Mutex<Subscription>),
    /// Events go to a callback on the subscription's thread.
    Callback {
        stop: Arc<Stop>,
        thread: Option<JoinHandle<()>>,
        thread_id: ThreadId,
    },
}

/// Tells a callback thread to end.
#[derive(Default)]
struct Stop {
    stopped: AtomicBool,
    wake: Notify,
}

/// The program's pointer, handed to its callback on the subscription's thread.
struct UserData(*mut c_void);
// SAFETY: the program gave the pointer for use by the callback on the subscription's thread
// (docs/c-api.md's threading rules); the library never dereferences it.
unsafe impl Send for UserData {}

/// Makes a subscription: with a callback on a thread of its own, or for polling.
pub fn start(
    subscription: Subscription,
    callback: herald_callback,
    user_data: *mut c_void,
) -> Result<Box<herald_subscription>, Failure> {
    let Some(callback) = callback else {
        return Ok(Box::new(herald_subscription {
            mode: Mode::Polling(Mutex::new(subscription)),
        }));
    };
    let stop = Arc::new(Stop::default());
    let user_data = UserData(user_data);
    let thread = std::thread::Builder::new()
        .name(format!("herald-sub-{}", subscription.id()))
        .spawn({
            let stop = Arc::clone(&stop);
            move || deliver(subscription, callback, user_data, &stop)
        })
        .map_err(|e| {
            Failure::new(
                crate::status::HERALD_E_INTERNAL,
                format!("no thread for the subscription: {e}"),
            )
        })?;
    let thread_id = thread.thread().id();
    Ok(Box::new(herald_subscription {
        mode: Mode::Callback {
            stop,
            thread: Some(thread),
            thread_id,
        },
    }))
}

/// The subscription thread: takes each event and calls the callback, until the
/// subscription ends or the connection closes.
fn deliver(
    mut subscription: Subscription,
    callback: unsafe extern "C" fn(*const herald_event, *mut c_void),
    user_data: UserData,
    stop: &Stop,
) {
    loop {
        if stop.stopped.load(Ordering::Acquire) {
            return;
        }
        // Waiting happens inside the runtime; the callback runs outside it, so that it may
        // call every Herald function, those that wait included.
        let event = match subscription.try_next() {
            Some(event) => event,
            None => {
                let next = runtime().block_on(async {
                    tokio::select! {
                        () = stop.wake.notified() => None,
                        event = subscription.next() => event,
                    }
                });
                match next {
                    Some(event) => event,
                    None => return,
                }
            }
        };
        if stop.stopped.load(Ordering::Acquire) {
            return;
        }
        let owned = OwnedEvent::new(event);
        // SAFETY: the program's callback, called as documented: the event is valid for the
        // call, and `user_data` is the program's own pointer.
        unsafe { callback(&owned.event, user_data.0) };
    }
}

/// Makes a record subscription from the three filter strings.
fn filter(
    subject: *const c_char,
    r#type: *const c_char,
    priorities: *const c_char,
) -> Result<Filter, Failure> {
    // SAFETY: the caller of the C function's contract (NULL or NUL-terminated).
    let (subject, type_name, priorities) = unsafe {
        (
            optional(subject, "subject")?,
            optional(r#type, "type")?,
            optional(priorities, "priorities")?,
        )
    };
    Filter::parse(subject, type_name, priorities, &[], None).map_err(Failure::invalid)
}

/// The end of every subscribe call: checks `out`, waits for the server to confirm the
/// subscription `subscribing` makes, starts it (a callback thread, or polling) and hands it
/// to the program.
///
/// # Safety
/// `out` is NULL or writable; `callback` and `user_data` as `herald_subscribe` says.
pub unsafe fn subscribed(
    subscribing: impl Future<Output = Result<Subscription, ClientError>>,
    callback: herald_callback,
    user_data: *mut c_void,
    out: *mut *mut herald_subscription,
) -> Result<(), Failure> {
    out::check(out)?;
    let subscription = block(subscribing)??;
    let made = start(subscription, callback, user_data)?;
    // SAFETY: the caller's contract.
    unsafe { out::give(out, made) }
}

/// Subscribes to the records whose subject matches the glob `subject` (`*` any run of
/// characters, dots included; `?` one character: `ANTENNA.*`), whose type matches the glob
/// `type`, and whose priority is in `priorities` (`>=WARNING`, `ERROR,ALERT`); NULL leaves a
/// dimension open. With a `callback`, events go to it on a thread of the subscription's own,
/// one at a time in order, with `user_data`; with NULL, take them with `herald_poll`. The subscription is in
/// `*out`; end it with `herald_unsubscribe`.
///
/// # Safety
/// `c` is NULL or a live client; the strings NULL or NUL-terminated; `out` NULL or
/// writable; `callback` a function that may be called on another thread with `user_data`.
#[no_mangle]
pub unsafe extern "C" fn herald_subscribe(
    c: *const herald_client,
    subject: *const c_char,
    r#type: *const c_char,
    priorities: *const c_char,
    callback: herald_callback,
    user_data: *mut c_void,
    out: *mut *mut herald_subscription,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let filter = filter(subject, r#type, priorities)?;
        // SAFETY: the caller's contract.
        unsafe { subscribe_with(c, filter, None, callback, user_data, out) }
    })
}

/// Subscribes `c` to `filter`, in queue group `group` if given.
///
/// # Safety
/// As `herald_subscribe`.
unsafe fn subscribe_with(
    c: &herald_client,
    filter: Filter,
    group: Option<&str>,
    callback: herald_callback,
    user_data: *mut c_void,
    out: *mut *mut herald_subscription,
) -> Result<(), Failure> {
    let options = herald_proto::DeliveryOptions {
        group: group.map(Arc::from),
        ..herald_proto::DeliveryOptions::default()
    };
    let subscribing = c.client.subscribe_with_options(filter, options);
    // SAFETY: the caller's contract.
    unsafe { subscribed(subscribing, callback, user_data, out) }
}

/// As `herald_subscribe`, as a member of queue group `group`: each record the group's
/// members match goes to one of them (the one with the shortest queue on the server), so
/// several programs share the work; subscribers outside the group get their own copy.
/// `group` is 1 to 255 bytes without control characters (`HERALD_E_INVALID` names what is
/// wrong). See docs/protocol.md, "Queue groups".
///
/// # Safety
/// As `herald_subscribe`; `group` is NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_subscribe_group(
    c: *const herald_client,
    subject: *const c_char,
    r#type: *const c_char,
    priorities: *const c_char,
    group: *const c_char,
    callback: herald_callback,
    user_data: *mut c_void,
    out: *mut *mut herald_subscription,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let filter = filter(subject, r#type, priorities)?;
        // SAFETY: the caller's contract.
        let group = unsafe { optional(group, "group") }?
            .ok_or_else(|| Failure::invalid("group is NULL"))?;
        herald_proto::delivery_options::check_group(group)
            .map_err(|why| Failure::invalid(format!("group: {why}")))?;
        // SAFETY: the caller's contract.
        unsafe { subscribe_with(c, filter, Some(group), callback, user_data, out) }
    })
}

/// Waits at most `timeout_ms` (0: not at all) for the next event of a polling
/// subscription and stores it in `*out` (free it with `herald_event_free`).
/// `HERALD_E_TIMEOUT` when none came; `HERALD_E_CLOSED` once the connection is closed and
/// every event was taken. Call from one thread at a time.
///
/// # Safety
/// `s` is NULL or a live subscription; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_poll(
    s: *mut herald_subscription,
    timeout_ms: c_int,
    out: *mut *mut herald_event,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let s = unsafe { s.as_ref() }.ok_or_else(|| Failure::invalid("subscription is NULL"))?;
        out::check(out)?;
        let wait = timeout(timeout_ms)?;
        let Mode::Polling(subscription) = &s.mode else {
            return Err(Failure::invalid(
                "the subscription delivers to its callback; herald_poll is for subscriptions made without one",
            ));
        };
        let mut subscription = subscription
            .lock()
            .map_err(|_| Failure::invalid("the subscription's lock is poisoned"))?;
        // With a zero wait the future is still polled once, so a closed connection is told
        // from an empty queue.
        let event = match subscription.try_next() {
            Some(event) => Some(event),
            None => block(async { tokio::time::timeout(wait, subscription.next()).await })?
                .map_err(|_| {
                    Failure::new(HERALD_E_TIMEOUT, format!("no event within {timeout_ms} ms"))
                })?,
        };
        let event: Event = event.ok_or_else(|| {
            Failure::new(
                HERALD_E_CLOSED,
                "the connection is closed; the subscription delivers nothing more",
            )
        })?;
        let owned = OwnedEvent::new(event);
        // SAFETY: checked not NULL, writable by the caller's contract. The `herald_event` is
        // the first field of the repr(C) `OwnedEvent`, so `herald_event_free` gets the box back.
        unsafe { *out = Box::into_raw(owned).cast::<herald_event>() };
        Ok(())
    })
}

/// Ends a subscription and frees it. With a callback: when this returns, the callback is
/// not running and will not be called again — unless this is called from the callback
/// itself, which then returns and is not called again. Works after `herald_close` too.
/// NULL is fine.
///
/// # Safety
/// `s` is NULL or a live subscription; nothing uses it after.
#[no_mangle]
pub unsafe extern "C" fn herald_unsubscribe(s: *mut herald_subscription) -> c_int {
    if s.is_null() {
        return 0;
    }
    // SAFETY: made by Box::into_raw in `give`, freed once by the caller's contract.
    let s = unsafe { Box::from_raw(s) };
    guard(move || {
        match s.mode {
            // Dropping the subscription tells the server (without waiting).
            Mode::Polling(subscription) => drop(subscription),
            Mode::Callback {
                stop,
                mut thread,
                thread_id,
            } => {
                stop.stopped.store(true, Ordering::Release);
                stop.wake.notify_one();
                if std::thread::current().id() != thread_id {
                    if let Some(thread) = thread.take() {
                        thread.join().map_err(|_| {
                            Failure::new(
                                crate::status::HERALD_E_INTERNAL,
                                "the subscription's thread panicked",
                            )
                        })?;
                    }
                }
            }
        }
        Ok(())
    })
}
