//! `herald_event`: what a subscription delivers — a record, a gap notice, or the notice of
//! a failover.

use std::ffi::{c_char, c_int};
use std::ptr;

use ::herald_client::Event;

use crate::record::herald_record;
use crate::strings::terminated;

/// A record (`record`).
pub const HERALD_EVENT_RECORD: c_int = 1;
/// Records were lost before reaching the subscription (`lost`, `lost_by_priority`,
/// `member`): the server's queue for it, a route in a cluster, or this client's buffer.
pub const HERALD_EVENT_GAP: c_int = 2;
/// The connection was lost and the client failed over (`server_lost`, `server_resumed`,
/// `down_ms`): records published meanwhile were not delivered — a gap of unknown size.
pub const HERALD_EVENT_INTERRUPTED: c_int = 3;

/// Priorities are numbered 1 to 11: `lost_by_priority` is indexed by the number.
pub const HERALD_PRIORITY_SLOTS: usize = 12;

/// One event of a subscription. In a callback it is valid until the callback returns; one
/// from `herald_poll` until `herald_event_free`.
#[repr(C)]
pub struct herald_event {
    /// `HERALD_EVENT_RECORD`, `HERALD_EVENT_GAP` or `HERALD_EVENT_INTERRUPTED`.
    pub r#type: c_int,
    /// The record (`HERALD_EVENT_RECORD`), owned by the event; NULL otherwise.
    pub record: *const herald_record,
    /// Records lost (`HERALD_EVENT_GAP`).
    pub lost: u64,
    /// Records lost per priority, indexed by the priority's number (`HERALD_WARNING` …).
    pub lost_by_priority: [u64; HERALD_PRIORITY_SLOTS],
    /// The cluster member whose route lost them; NULL for losses on the server the client
    /// is connected to or in the client.
    pub member: *const c_char,
    /// The server whose connection was lost (`HERALD_EVENT_INTERRUPTED`).
    pub server_lost: *const c_char,
    /// The server the subscription was made again on.
    pub server_resumed: *const c_char,
    /// How long the subscription went unserved, ms.
    pub down_ms: u64,
}

/// An event and what its pointers point into. `event` comes first, so a pointer to it is
/// a pointer to the whole.
#[repr(C)]
pub struct OwnedEvent {
    pub event: herald_event,
    record: Option<Box<herald_record>>,
    strings: Vec<Box<[u8]>>,
}

// SAFETY: the raw pointers point into the event's own boxes, never changed after it is made.
unsafe impl Send for OwnedEvent {}

impl OwnedEvent {
    /// Makes the C form of `event`.
    pub fn new(event: Event) -> Box<OwnedEvent> {
        let mut owned = Box::new(OwnedEvent {
            event: herald_event {
                r#type: 0,
                record: ptr::null(),
                lost: 0,
                lost_by_priority: [0; HERALD_PRIORITY_SLOTS],
                member: ptr::null(),
                server_lost: ptr::null(),
                server_resumed: ptr::null(),
                down_ms: 0,
            },
            record: None,
            strings: Vec::new(),
        });
        match event {
            Event::Record(delivered) => {
                let (seq, received) = (delivered.seq, delivered.received);
                let record = herald_record::boxed(delivered.into_record(), seq, received);
                owned.event.r#type = HERALD_EVENT_RECORD;
                owned.event.record = &*record;
                owned.record = Some(record);
            }
            Event::Gap(gap) => {
                owned.event.r#type = HERALD_EVENT_GAP;
                owned.event.lost = gap.count;
                for (priority, count) in gap.by_priority {
                    owned.event.lost_by_priority[priority as usize] += count;
                }
                if let Some(member) = gap.member {
                    owned.event.member = owned.string(&member);
                }
            }
            Event::Interrupted(interruption) => {
                owned.event.r#type = HERALD_EVENT_INTERRUPTED;
                owned.event.server_lost = owned.string(&interruption.lost);
                owned.event.server_resumed = owned.string(&interruption.resumed);
                owned.event.down_ms =
                    u64::try_from(interruption.down.as_millis()).unwrap_or(u64::MAX);
            }
        }
        owned
    }

    fn string(&mut self, text: &str) -> *const c_char {
        let owned = terminated(text.as_bytes());
        let ptr = owned.as_ptr().cast();
        self.strings.push(owned);
        ptr
    }
}

/// Frees an event from `herald_poll` (never one passed to a callback). NULL is fine.
///
/// # Safety
/// `event` is NULL or an event from `herald_poll` not freed yet; nothing uses it (or its
/// record) after.
#[no_mangle]
pub unsafe extern "C" fn herald_event_free(event: *mut herald_event) {
    if !event.is_null() {
        // SAFETY: events from `herald_poll` are `OwnedEvent`s made by Box::into_raw, whose
        // first field (repr(C)) is the `herald_event`; freed once by the caller's contract.
        drop(unsafe { Box::from_raw(event.cast::<OwnedEvent>()) });
    }
}
