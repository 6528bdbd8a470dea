//! Where a subcommand's output file goes: the one writer `save`, `convert` and `gen` share.
//!
//! `-` is standard output. A symbolic link is followed to the file it points to
//! ([`ipfib::saved::write_target`]), which is what gets replaced: the link stays. A regular
//! file (or a name that does not exist yet) is written under a hidden temporary name next to
//! it and renamed into place when complete, so a failed run never leaves a partial file and
//! readers never see one; the temporary file is removed on failure and on SIGINT, SIGTERM or
//! SIGHUP ([`crate::cleanup`]). Anything else (a device such as `/dev/null`, a FIFO) is
//! written through, in place: renaming over it would replace the device with a regular file.
//! A name ending in `.gz` is gzip-compressed.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use flate2::write::GzEncoder;
use flate2::Compression;

/// Writes through `write` to `path` as described in the module docs; errors name the file. A
/// closed standard output (`| head`) ends the write quietly.
pub fn write_to(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        let stdout = io::stdout();
        let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
        return match write(&mut out).and_then(|()| out.flush()) {
            Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            other => other.context("writing to standard output"),
        };
    }
    let name = path.display();
    let path =
        &ipfib::saved::write_target(path).with_context(|| format!("{name}: cannot write"))?;
    let regular = match std::fs::metadata(path) {
        Ok(meta) => meta.is_file(),
        Err(e) if e.kind() == io::ErrorKind::NotFound => true,
        Err(e) => return Err(e).with_context(|| format!("{name}: cannot write")),
    };
    let gzip = path.extension().is_some_and(|e| e == "gz");
    if !regular {
        let file = OpenOptions::new()
            .write(true)
            .open(path)
            .with_context(|| format!("{name}: cannot open for writing"))?;
        return encode(file, gzip, write, false).with_context(|| format!("{name}: write failed"));
    }
    let tmp = temporary_name(path);
    let registered = crate::cleanup::register(&tmp);
    let file = File::create(&tmp).with_context(|| format!("{name}: cannot create"))?;
    let result = encode(file, gzip, write, true).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        drop(registered);
        return Err(e).with_context(|| format!("{name}: write failed"));
    }
    drop(registered);
    Ok(())
}

/// `.NAME.tmpPID` beside `path` (hidden, so a directory listing or a glob over the outputs
/// does not pick up a half-written file).
fn temporary_name(path: &Path) -> PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(format!(".tmp{}", std::process::id()));
    path.with_file_name(name)
}

/// Writes through a buffer (and a gzip encoder when asked) into `file`, syncing a regular
/// file before it is renamed into place.
fn encode(
    file: File,
    gzip: bool,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    sync: bool,
) -> io::Result<()> {
    let file = if gzip {
        // The buffer sits in front of the compressor: the writers emit one short line at a
        // time, and feeding those to deflate directly is several times slower.
        let mut out =
            BufWriter::with_capacity(1 << 16, GzEncoder::new(file, Compression::default()));
        write(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.finish()?
    } else {
        let mut out = BufWriter::with_capacity(1 << 16, file);
        write(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?
    };
    if sync {
        file.sync_all()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hello(out: &mut dyn Write) -> io::Result<()> {
        out.write_all(b"hello\n")
    }

    #[test]
    fn regular_files_are_replaced_whole_and_failures_leave_nothing() {
        let dir = std::env::temp_dir().join(format!("ipfib-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("t.txt");
        std::fs::write(&path, "old\n").unwrap();
        write_to(&path, hello).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
        let err = write_to(&path, |out| {
            out.write_all(b"partial")?;
            Err(io::Error::other("disk full"))
        });
        assert!(err.is_err());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "hello\n");
        let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn devices_are_written_through_not_replaced() {
        let null = Path::new("/dev/null");
        if !null.exists() {
            return;
        }
        write_to(null, hello).unwrap();
        let meta = std::fs::metadata(null).unwrap();
        assert!(!meta.is_file(), "/dev/null is still a device");
    }
}
