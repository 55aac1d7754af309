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

/// One `#[test]` per target, named for it, and the list of their names, so that
/// `every_fuzz_target_is_replayed` knows exactly which targets have a test.
macro_rules! replay_targets {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                replay(stringify!($name), fuzz::$name);
            }
        )*
        const REPLAYED: &[&str] = &[$(stringify!($name)),*];
    };
}

replay_targets!(
    frame_decode,
    record_decode,
    request_decode,
    filter_parse,
    config_parse,
    server_url,
    http_params,
    is_xml,
    syslog_parse,
    otlp_decode,
);

/// Every target in `fuzz/fuzz_targets/` has a replay test above, and every test a target.
#[test]
fn every_fuzz_target_is_replayed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/fuzz_targets");
    let mut found: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|err| panic!("{} is missing: {err}", dir.display()))
        .map(|entry| entry.expect("readable entry").path())
        .filter_map(|path| Some(path.file_stem()?.to_str()?.to_string()))
        .collect();
    found.sort();
    let mut replayed = REPLAYED.to_vec();
    replayed.sort();
    assert_eq!(found, replayed);
}
