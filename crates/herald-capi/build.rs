//! Gives libherald.so its SONAME, `libherald.so.<major>`: programs record that name, so an
//! installed library can be replaced by a compatible one (scripts/install-capi.sh installs
//! `libherald.so.<version>` with the two links the loader and the linker look for).

fn main() {
    let major = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap_or_else(|_| "0".to_string());
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libherald.so.{major}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}
