//! Runs the committed fuzz corpus (`fuzz/corpus/<target>/`) through the fuzz targets'
//! functions on stable Rust, so `cargo test` keeps every seed and every minimized finding
//! passing without nightly or cargo-fuzz. A missing or empty corpus directory fails: a
//! target must not silently test nothing.

use std::path::{Path, PathBuf};

use herald_testkit::fuzz;

fn corpus_dir(target: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/corpus")
        .join(target)
}

/// Feeds every file of `fuzz/corpus/<target>/` to `run`, naming the file that fails.
fn replay(target: &str, run: fn(&[u8])) {
    let dir = corpus_dir(target);
    let entries = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("corpus {} is missing: {err}", dir.display()));
    let mut files: Vec<PathBuf> = entries
        .map(|entry| entry.expect("readable corpus entry").path())
        .filter(|path| path.is_file())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "corpus {} is empty", dir.display());
    for path in files {
        let data = std::fs::read(&path).expect("readable corpus file");
        let outcome = std::panic::catch_unwind(|| run(&data));
        assert!(outcome.is_ok(), "{target}: {} fails", path.display());
    }
}

/// Every target in `fuzz/fuzz_targets/` is one of `fuzz::TARGETS`, each of which has a
/// test below.
#[test]
fn every_fuzz_target_is_replayed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{} is missing: {err}", dir.display()))
        .map(|entry| entry.expect("readable entry").path())
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .collect();
    found.sort();
    let mut known: Vec<&str> = fuzz::TARGETS.iter().map(|(name, _)| *name).collect();
    known.sort();
    assert_eq!(found, known);
}

#[test]
fn frame_decode() {
    replay("frame_decode", fuzz::frame_decode);
}

#[test]
fn record_decode() {
    replay("record_decode", fuzz::record_decode);
}

#[test]
fn request_decode() {
    replay("request_decode", fuzz::request_decode);
}

#[test]
fn filter_parse() {
    replay("filter_parse", fuzz::filter_parse);
}

#[test]
fn config_parse() {
    replay("config_parse", fuzz::config_parse);
}

#[test]
fn server_url() {
    replay("server_url", fuzz::server_url);
}

#[test]
fn http_params() {
    replay("http_params", fuzz::http_params);
}

#[test]
fn is_xml() {
    replay("is_xml", fuzz::is_xml);
}
