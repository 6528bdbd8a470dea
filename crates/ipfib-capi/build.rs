//! Generates the C header from the crate's sources with cbindgen into `OUT_DIR` (the
//! `header_is_fresh` test compares it with the checked-in `include/ipfib.h`), and writes the
//! checked-in copy too when `IPFIB_WRITE_HEADER=1`; gives the shared library its soname.

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-env-changed=IPFIB_WRITE_HEADER");
    // The shared library's soname, as scripts/install-c.sh installs it: libipfib.so.MAJOR, or
    // libipfib.so.0.MINOR before 1.0 (a minor release may break the interface then).
    if std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|os| os == "linux") {
        let major = std::env::var("CARGO_PKG_VERSION_MAJOR").expect("set by cargo");
        let minor = std::env::var("CARGO_PKG_VERSION_MINOR").expect("set by cargo");
        let so_version = if major == "0" {
            format!("0.{minor}")
        } else {
            major
        };
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libipfib.so.{so_version}");
    }
    let crate_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo")).join("ipfib.h");
    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml is valid");
    // The version macros, from the crate's version (one place: Cargo.toml).
    let version = std::env::var("CARGO_PKG_VERSION").expect("set by cargo");
    let number = |key: &str| std::env::var(key).expect("set by cargo");
    config.after_includes = Some(format!(
        "\n/* The version of this header; ipfib_version() gives the library's. */\n\
         #define IPFIB_VERSION \"{version}\"\n\
         #define IPFIB_VERSION_MAJOR {}\n\
         #define IPFIB_VERSION_MINOR {}\n\
         #define IPFIB_VERSION_PATCH {}",
        number("CARGO_PKG_VERSION_MAJOR"),
        number("CARGO_PKG_VERSION_MINOR"),
        number("CARGO_PKG_VERSION_PATCH"),
    ));
    let bindings = cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen can read src/lib.rs");
    bindings.write_to_file(&out);
    if std::env::var_os("IPFIB_WRITE_HEADER").is_some_and(|v| v == "1") {
        bindings.write_to_file(crate_dir.join("include/ipfib.h"));
    }
}
