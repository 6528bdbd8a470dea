//! Where the tests find the shared data set: real BGP tables and MRT dumps in `../shared/data`
//! beside the checkout (never copied into it). Every test that needs them asks here, skips with
//! the same message when they are absent, and can be pointed elsewhere with
//! `IPFIB_SHARED_DATA`.

use std::path::{Path, PathBuf};

/// The shared data directory: `IPFIB_SHARED_DATA`, else `<checkout>/../shared/data`.
fn location() -> PathBuf {
    match std::env::var_os("IPFIB_SHARED_DATA") {
        Some(dir) => PathBuf::from(dir),
        // This crate sits at `<checkout>/crates/ipfib-testdata`.
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    }
}

/// The shared data directory, or `None` (after saying so on stderr) when it is absent.
pub fn shared_data() -> Option<PathBuf> {
    let dir = location();
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!(
            "skipping: ../shared/data not found (set IPFIB_SHARED_DATA to run the real-data tests)"
        );
        None
    }
}

/// A file of the shared data set (`rel` below the data directory), or `None` (after saying so)
/// when it is absent.
pub fn shared_file(rel: &str) -> Option<PathBuf> {
    let path = shared_data()?.join(rel);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipping: {} not found", path.display());
        None
    }
}
