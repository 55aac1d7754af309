//! The wire test vectors in `testdata/vectors/`: each JSON file holds cases of
//! `{ "name", "description", "hex", "frame" }`, where `hex` is a whole frame (length prefix
//! included) and `frame` its meaning. Rust, Python and C tests all read these files.
//!
//! The files are generated: [`generate`] builds them from fixed frames, the example
//! `write_vectors` writes them (`cargo run -p herald-testkit --example write_vectors`), and
//! `tests/vectors.rs` fails if the committed files differ from what [`generate`] gives.
//! [`frame_to_json`] defines the meaning; docs/protocol.md describes it for other languages.

mod cases;
mod meaning;

use std::path::{Path, PathBuf};

pub use cases::generate;
pub use meaning::{
    ack_level_name, fields_json, filter_to_json, frame_to_json, origin_json, record_json,
    value_json,
};

/// Returns the repository's `testdata/vectors` directory.
pub fn directory() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/vectors")
}

/// One test vector.
#[derive(Debug, Clone)]
pub struct Vector {
    /// File it came from.
    pub file: String,
    /// Case name.
    pub name: String,
    /// The frame's bytes.
    pub bytes: Vec<u8>,
    /// The frame's meaning, as JSON.
    pub meaning: serde_json::Value,
}

/// Reads every vector file.
///
/// # Panics
/// If a file is missing or malformed: the vectors are part of the repository.
pub fn load_all() -> Vec<Vector> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(directory())
        .expect("testdata/vectors exists")
        .map(|entry| entry.expect("readable directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut vectors = Vec::new();
    for path in files {
        let text = std::fs::read_to_string(&path).expect("readable vector file");
        let json: serde_json::Value = serde_json::from_str(&text).expect("vector file is JSON");
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for case in json["cases"].as_array().expect("vector file has `cases`") {
            vectors.push(Vector {
                file: file.clone(),
                name: case["name"].as_str().expect("case has a name").to_string(),
                bytes: from_hex(case["hex"].as_str().expect("case has hex")),
                meaning: case["frame"].clone(),
            });
        }
    }
    vectors
}

/// Decodes lower- or upper-case hex, ignoring spaces.
///
/// # Panics
/// On a character that is not hex.
pub fn from_hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| {
            u8::from_str_radix(std::str::from_utf8(pair).expect("ascii"), 16).expect("hex digit")
        })
        .collect()
}

/// Encodes bytes as lower-case hex.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Returns the text of a vector file: pretty-printed JSON with a trailing newline.
///
/// # Panics
/// Never for values built by [`generate`]; serde_json fails only on non-string map keys.
pub fn render(file: &serde_json::Value) -> String {
    let mut text = serde_json::to_string_pretty(file).expect("vector JSON serializes");
    text.push('\n');
    text
}

/// Writes every file [`generate`] returns into `directory`, returning the paths written.
///
/// # Errors
/// The first I/O error, with the path.
pub fn write_files(directory: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(directory)?;
    let mut written = Vec::new();
    for (name, file) in generate() {
        let path = directory.join(name);
        std::fs::write(&path, render(&file)).map_err(|err| {
            std::io::Error::new(err.kind(), format!("writing {}: {err}", path.display()))
        })?;
        written.push(path);
    }
    Ok(written)
}
