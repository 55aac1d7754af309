//! Embeds the browser UI: walks `ui/` and writes `$OUT_DIR/ui_assets.rs`, a table of every
//! file (path relative to `ui/` with `/` separators, `include_bytes!` of its absolute path),
//! sorted by path. `README.md` files describe the folder and are left out.

use std::path::{Path, PathBuf};
use std::{env, fs, io};

fn main() -> io::Result<()> {
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = manifest.join("ui");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    if root.is_dir() {
        walk(&root, &mut files)?;
    }
    files.sort();
    let mut table = String::from(
        "/// Every embedded UI file: (path relative to `ui/`, contents), sorted by path.\n\
         pub static UI_ASSETS: &[(&str, &[u8])] = &[\n",
    );
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let relative = file.strip_prefix(&root).expect("under ui/");
        let name: Vec<String> = relative
            .components()
            .map(|part| part.as_os_str().to_string_lossy().into_owned())
            .collect();
        table.push_str(&format!(
            "    ({:?}, include_bytes!({:?})),\n",
            name.join("/"),
            file.display().to_string()
        ));
    }
    table.push_str("];\n");
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    fs::write(out.join("ui_assets.rs"), table)
}

fn walk(dir: &Path, files: &mut Vec<PathBuf>) -> io::Result<()> {
    for entry in fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            walk(&path, files)?;
        } else if path.file_name().is_some_and(|name| name != "README.md") {
            files.push(path);
        }
    }
    Ok(())
}
