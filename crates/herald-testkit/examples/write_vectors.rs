//! Regenerates the wire test vectors in `testdata/vectors/`.
//!
//! Run from anywhere in the repository:
//! ```text
//! cargo run -p herald-testkit --example write_vectors
//! ```
//! The frames are defined in `crates/herald-testkit/src/vectors/cases.rs`; the test
//! `crates/herald-testkit/tests/vectors.rs` fails until the committed files match them.

fn main() -> std::io::Result<()> {
    let directory = herald_testkit::vectors::directory();
    for path in herald_testkit::vectors::write_files(&directory)? {
        println!("wrote {}", path.display());
    }
    Ok(())
}
