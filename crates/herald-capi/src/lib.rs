//! The C API of the Herald client: `herald.h`, generated from this crate by cbindgen, and
//! `herald.hpp`, a C++17 header over it. Built as `libherald.so` and `libherald.a`.
//!
//! Every function checks its arguments (a NULL or invalid one is `HERALD_E_INVALID`, never a
//! crash), returns an `int` status (0, or a negative `HERALD_E_*` code) and leaves the
//! message of a failure in [`herald_last_error`]. Accessors that cannot fail return their
//! value. A panic inside the library is caught and reported as `HERALD_E_INTERNAL`.
//! docs/c-api.md is the reference for C and C++ programmers: building, linking, threading
//! rules, ownership of every pointer, the status codes.
//!
//! # Layout, in layers that depend only downward
//! 1. The C functions, one concept per file: [`client`] (connect, close, flush, monitor),
//!    [`publish`] (publish, request, reply), [`log`] (the logger and `HERALD_LOG`) over
//!    [`site`] (its call sites) and [`plan`] (a site's format read once, its arguments
//!    captured and the text made by `render` on the logger's thread),
//!    [`subscribe`] (callbacks and polling), [`info`] (information objects).
//! 2. The values they pass: [`record`] (`herald_record`: built by the program with
//!    [`builder`], or delivered), [`view`] (`herald_record_view`, the record as plain C data),
//!    [`event`] (`herald_event`: a record, a gap notice or a failover).
//! 3. Below them: [`status`] (codes, the thread's last error, the panic guard),
//!    [`strings`] (C strings in), `out` (out-parameters checked and written), `runtime`
//!    (the library's I/O threads).
#![allow(non_camel_case_types)]

pub mod builder;
pub mod client;
pub mod event;
pub mod info;
pub mod log;
mod out;
pub mod plan;
pub mod publish;
pub mod record;
mod render;
mod runtime;
pub mod site;
pub mod status;
pub mod strings;
pub mod subscribe;
pub mod view;

pub use client::herald_client;
pub use event::herald_event;
pub use record::herald_record;
pub use status::herald_last_error;
pub use subscribe::herald_subscription;
pub use view::{herald_field, herald_record_view};
