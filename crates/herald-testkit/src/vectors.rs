//! The wire test vectors in `testdata/vectors/`: each JSON file holds cases of
//! `{ "name", "description", "hex", "frame" }`, where `hex` is a whole frame (length prefix
//! included) and `frame` its meaning. Rust, Python and C tests all read these files.

use std::path::PathBuf;

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
