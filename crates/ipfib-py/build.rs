//! Lets the crate's own Rust test binaries start.
//!
//! Python loads the extension module into a process that already has libpython, so the
//! module must not link it (maturin sets `PYO3_BUILD_EXTENSION_MODULE`, and PyO3 then leaves
//! libpython out). Plain `cargo test`/`cargo build` link libpython instead, and with a shared
//! libpython outside the loader's paths (pyenv, a venv's base) the test binary would not
//! start. So, only when not building the extension module, the binaries get an rpath to the
//! interpreter's library directory.

fn main() {
    // The interpreter's cfgs (`Py_3_14`, `Py_GIL_DISABLED`, ...): `strs` reads `str` objects in
    // place only where their layout is known and items can be borrowed.
    pyo3_build_config::use_pyo3_cfgs();
    println!("cargo:rerun-if-env-changed=PYO3_BUILD_EXTENSION_MODULE");
    if std::env::var_os("PYO3_BUILD_EXTENSION_MODULE").is_none() {
        pyo3_build_config::add_libpython_rpath_link_args();
    }
}
