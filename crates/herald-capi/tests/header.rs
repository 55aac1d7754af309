//! The committed `include/herald.h` is exactly what cbindgen makes from the crate: a C
//! function added, changed or documented differently without regenerating it fails here.

use std::process::Command;

#[test]
fn the_committed_header_is_what_cbindgen_makes() {
    let crate_dir = env!("CARGO_MANIFEST_DIR");
    let made = tempfile::NamedTempFile::new().expect("temp file");
    let run = Command::new("cbindgen")
        .current_dir(crate_dir)
        .args([
            "--quiet",
            "--config",
            "cbindgen.toml",
            "--crate",
            "herald-capi",
            "--output",
        ])
        .arg(made.path())
        .status();
    let status = match run {
        Ok(status) => status,
        Err(e) => {
            panic!("cannot run cbindgen ({e}): install it with `cargo install cbindgen --locked`")
        }
    };
    assert!(status.success(), "cbindgen failed: {status}");
    let committed =
        std::fs::read_to_string(format!("{crate_dir}/include/herald.h")).expect("include/herald.h");
    let generated = std::fs::read_to_string(made.path()).expect("generated header");
    assert!(
        committed == generated,
        "include/herald.h differs from what cbindgen makes: run scripts/capi-header.sh and commit it \
         (scripts/capi-header.sh --check shows the difference)"
    );
}
