//! The bodies of the fuzz targets in `fuzz/fuzz_targets/`, one function per target, kept
//! here so that stable builds run the same code: `tests/fuzz_corpus.rs` feeds every file of
//! `fuzz/corpus/<target>/` to the function of that name, and cargo-fuzz (nightly) feeds it
//! whatever libFuzzer makes up. docs/reliability.md says how to run them and what was found.
//!
//! Every function takes any bytes. The code under test must never panic; the functions
//! themselves panic (`assert!`) only when a property fails, which is what the fuzzer reports:
//! - [`frame_decode`]: a byte stream cut in two at any point gives the same frames and
//!   errors as the stream whole (nats-server `parser_fuzz_test.go`); every frame that
//!   decodes re-encodes to bytes that decode to an equal frame.
//! - [`record_decode`]: `Record::from_bytes` and `RecordMeta::scan` accept and refuse the
//!   same records with the same error; `CheckedPublish` routes exactly the records
//!   `RawRecord::new` accepts; `request_cid` reads the cid of every request that decodes.
//! - [`request_decode`]: `INFO`, `QUERY` and `SUBSCRIBE` bodies round-trip.
//! - [`filter_parse`]: globs against a naive reference matcher; priority and kind sets,
//!   filters from text.
//! - [`config_parse`]: TOML and `HERALD_*` variables into a `Config` that keeps its rules.
//! - [`server_url`]: `herald://` URLs.
//! - [`http_params`]: the archive routes' query strings, and time parsing.
//! - [`is_xml`]: information objects as XML (checked by a small XML parser) and JSON (back
//!   again).
//! - [`syslog_parse`]: syslog messages read, made records and checked; TCP streams framed
//!   whole and cut in two.
//! - [`otlp_decode`]: OpenTelemetry export requests (protobuf, JSON) and the records made of
//!   them.
//!
//! Inputs that need several parts start with a selector byte; the corpus files in
//! `fuzz/corpus/` show the layout of each.

mod config;
mod info;
mod otlp;
mod syslog;
mod text;
mod wire;
mod xml_check;

pub use config::config_parse;
pub use info::is_xml;
pub use otlp::otlp_decode;
pub use syslog::syslog_parse;
pub use text::{filter_parse, http_params, server_url};
pub use wire::{frame_decode, record_decode, request_decode};

/// Asserts that two decoded values are equal. `PartialEq` fails on a float that is NaN on
/// both sides, so values that differ only so compare equal by their `Debug` form.
fn assert_same<T: PartialEq + std::fmt::Debug>(left: &T, right: &T, what: &str) {
    if left != right {
        let (left, right) = (format!("{left:?}"), format!("{right:?}"));
        assert_eq!(left, right, "{what}");
    }
}

/// Splits off the first byte as a selector; `None` for empty input.
fn selector(data: &[u8]) -> Option<(u8, &[u8])> {
    data.split_first().map(|(first, rest)| (*first, rest))
}
