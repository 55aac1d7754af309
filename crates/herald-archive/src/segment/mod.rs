//! Segment files: the append-only, block-compressed form of the archive that issue 19 builds
//! towards (docs/benchmarks.md, "Block compression for the archive"). This module is the
//! file format only — blocks of entries as received, compressed, with a header that lets a
//! reader skip a block without reading it, and the repair of a torn tail; the store that
//! writes segments per table, class and hour, and reads them for queries, is built on it.
//!
//! - [`block`]: one block: [`BlockBuilder`] gathers entries (their record bytes as they
//!   arrived, no re-encoding) and makes the bytes of a block; [`BlockHeader`] is what a
//!   reader sees first (time range, sequence range, priorities, sizes, checksums);
//!   [`decode_entries`] reads a block's entries back.
//! - [`filter`]: the subject filter (a Bloom filter) of a samples block.
//! - [`file`](mod@file): one segment file: [`SegmentWriter`] appends blocks, [`scan`] lists a file's
//!   blocks by their headers, [`read_block`] reads one, [`repair`] cuts a torn tail back to
//!   the last whole block and says what it cut.

pub mod block;
pub mod file;
pub mod filter;

pub use block::{decode_entries, decode_raw, BlockBuilder, BlockHeader, Codec, BLOCK_HEADER_BYTES};
pub use file::{read_block, repair, scan, BlockRef, Repair, SegmentWriter, SEGMENT_HEADER};
