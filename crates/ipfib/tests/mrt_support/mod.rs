//! Helpers shared by the MRT integration tests: locating ../shared/data, reading gzip text.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// The shared data directory, or `None` (after saying so on stderr) when it is absent.
pub fn data_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("IPFIB_SHARED_DATA") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/data"),
    };
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: ../shared/data not found");
        None
    }
}

/// A file of the shared data set, or `None` (after saying so) when it is absent.
pub fn data_file(rel: &str) -> Option<PathBuf> {
    let path = data_dir()?.join(rel);
    if path.is_file() {
        Some(path)
    } else {
        eprintln!("skipping: {} not found", path.display());
        None
    }
}

/// The lines of a gzip-compressed text file.
pub fn gz_lines(path: &Path) -> Vec<String> {
    let file = std::fs::File::open(path).unwrap();
    BufReader::new(flate2::read::MultiGzDecoder::new(file))
        .lines()
        .map(|l| l.unwrap())
        .collect()
}

/// The whole decompressed content of a gzip or bzip2 file.
pub fn decompressed(path: &Path) -> Vec<u8> {
    let file = std::fs::File::open(path).unwrap();
    let mut out = Vec::new();
    if path.extension().is_some_and(|e| e == "bz2") {
        bzip2::read::MultiBzDecoder::new(file)
            .read_to_end(&mut out)
            .unwrap();
    } else {
        flate2::read::MultiGzDecoder::new(file)
            .read_to_end(&mut out)
            .unwrap();
    }
    out
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ipfib-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
