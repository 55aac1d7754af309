//! Herald's record model, filters and wire frames: pure encode and decode, no I/O.
//!
//! Everything that crosses a socket or lands in a test vector is defined here, so the server,
//! the Rust client and the other languages' clients (checked against `testdata/vectors/`)
//! agree on every byte. docs/protocol.md draws the same bytes for people.
//!
//! # Layout
//! - [`msgpack`]: the MessagePack subset, written by hand so encodings are exact.
//! - [`record`]: [`Record`] (owned) and [`RecordMeta`] (routing fields read without allocating).
//! - [`origin`], [`value`]: parts of a record.
//! - [`priority`], [`kind`]: priorities 1..11 and kinds, with sets of each.
//! - [`glob`], [`filter`]: subscription patterns and filters; [`delivery_options`]: queue
//!   policy, bounds, protected priority and latest-only delivery of a subscription.
//! - [`frame`]: frame types, framing (`check_frame`), encode/decode of every frame.
//! - [`request`]: [`CheckedPublish`](request::CheckedPublish) (a `PUBLISH` checked record by
//!   record) and [`request_cid`](request::request_cid), to refuse one bad request alone.
//! - [`value_end`]: where a value's bytes end, whatever they hold (to step over a refused
//!   record).
//! - [`frame_buffer`]: [`FrameBuffer`](frame_buffer::FrameBuffer), whole frames out of a byte stream.
//! - [`info`]: information objects, types and selections as the `INFO*` frames carry them.
//! - [`time`]: timestamps and ISO 8601.
//! - [`error`]: [`DecodeError`] and [`FrameError`].
//!
//! # Example
//! ```
//! use herald_proto::{Frame, Kind, Priority, Record};
//!
//! let record = Record { priority: Priority::Warning, text: "encoder fault".into(),
//!                       ..Record::new(Kind::Log, "ANTENNA.DV01.Mount") };
//! let bytes = record.to_bytes();
//! assert_eq!(Record::from_bytes(&bytes).unwrap(), record);
//! assert_eq!(Frame::Ping.to_bytes(), [0, 0, 0, 1, 0x40]);
//! ```
#![deny(missing_docs)]

pub mod archive;
pub mod delivery_options;
pub mod error;
pub mod filter;
pub mod frame;
mod frame_body;
pub mod frame_buffer;
pub mod glob;
pub mod info;
pub mod kind;
pub mod msgpack;
pub mod origin;
pub mod priority;
mod raw_record;
pub mod record;
mod record_encode;
mod record_meta;
mod record_scan;
pub mod request;
pub mod route;
pub mod storm;
#[cfg(test)]
mod test_rng;
pub mod time;
pub mod value;
pub mod value_end;
mod wire;

pub use delivery_options::{DeliveryOptions, Policy};
pub use error::{DecodeError, FrameError};
pub use filter::{Filter, FilterError};
pub use frame::{AckLevel, ErrorCode, ErrorFrame, Frame, FrameType};
pub use glob::{Glob, GlobError};
pub use kind::{Kind, KindSet};
pub use origin::Origin;
pub use priority::{Priority, PriorityError, PrioritySet};
pub use record::{Record, RecordMeta};
pub use value::Value;
