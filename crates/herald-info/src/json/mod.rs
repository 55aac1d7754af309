//! The JSON form of information objects, types and values — one form for the HTTP API, the
//! CLI's `--json` output and anything else that speaks JSON.
//!
//! An object is `{"name", "type", "time" (ISO 8601, ms), "time_ns", "version",
//! "attributes": {…}}`; a type is `{"name", "base", "description", "attributes": [{"name",
//! "type", "description"}]}`. Object keys come sorted by name (serde_json's map; its
//! `preserve_order` feature would reorder every other JSON the workspace writes too, the wire
//! test vectors included). Values map as follows, the same way in and out:
//!
//! | Herald value | JSON out | JSON in |
//! |---|---|---|
//! | bool | `true` | `true` |
//! | integer (`s8` … `u64`) | `42` | `42`, or `42.0` (a float with no fraction) |
//! | float, double | `1.5` | any number (`20` becomes `20.0`) |
//! | string | `"text"` | `"text"` (a number is not a string: no silent conversion) |
//! | time | `"2026-11-20T02:00:00.123Z"`, with 6 or 9 fraction digits when needed | the same ISO 8601 text with a zone, or integer nanoseconds since the epoch |
//! | bytes | `"00ff"` (hex) | hex text |
//! | array | `[…]` | `[…]` |
//! | nested type | `{…}` | `{…}` |
//!
//! Reading JSON is guided by the declared type ([`attributes_from_json`]): an ISO 8601 string
//! only becomes a time where the attribute is a `time`. Where the type says nothing (an
//! undeclared type or attribute) values keep their JSON kind, and the store's check then
//! names the problem. `null` is never a value.

mod from_json;
mod record_json;
mod to_json;

pub use from_json::{attributes_from_json, time_from_json};
pub use record_json::{bucket_json, record_json};
pub use to_json::{fields_json, object_json, type_json, value_json};
