//! The lookup socket of `ipfib follow`: a Unix stream socket; each client gets a thread with
//! its own live-table reader. One address per line in, one line out: the next hop number or
//! `-` (`ipfib lookup`'s format), or with [`Format::Hop`] the BGP next-hop address. A line
//! that is not an address gets `error: ...` and the connection stays open.

use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::net::IpAddr;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::RwLock;
use std::time::Duration;

use anyhow::Context;
use ipfib::LiveFib;

/// What the socket answers.
#[derive(Clone, Copy, Debug, clap::ValueEnum)]
pub enum Format {
    /// The next hop number (`ipfib lookup`'s output).
    Id,
    /// The BGP next-hop address.
    Hop,
}

/// Binds the socket; an old socket file at `path` (left by a killed run) is replaced, any
/// other file is an error.
pub fn bind(path: &Path) -> anyhow::Result<UnixListener> {
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        anyhow::ensure!(
            meta.file_type().is_socket(),
            "{}: exists and is not a socket",
            path.display()
        );
        std::fs::remove_file(path).with_context(|| format!("removing {}", path.display()))?;
    }
    let listener =
        UnixListener::bind(path).with_context(|| format!("cannot bind {}", path.display()))?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// Serves clients until `stop` is set.
pub fn serve(
    listener: UnixListener,
    live: &LiveFib,
    hops: &RwLock<Vec<IpAddr>>,
    format: Format,
    stop: &AtomicBool,
) {
    std::thread::scope(|s| {
        while !stop.load(Ordering::Relaxed) {
            match listener.accept() {
                Ok((stream, _)) => {
                    s.spawn(move || {
                        let _ = client(stream, live, hops, format, stop);
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        }
    });
}

fn client(
    stream: UnixStream,
    live: &LiveFib,
    hops: &RwLock<Vec<IpAddr>>,
    format: Format,
    stop: &AtomicBool,
) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_read_timeout(Some(Duration::from_millis(100)))?;
    let mut reader = live.reader();
    let mut input = BufReader::new(stream.try_clone()?);
    let mut out = BufWriter::new(stream);
    let mut line = String::new();
    while !stop.load(Ordering::Relaxed) {
        match input.read_line(&mut line) {
            Ok(0) => break,
            // A last line without a newline is answered too.
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue
            }
            Err(e) => return Err(e),
        }
        let text = line.trim();
        let answer = match crate::addresses::parse_addr(text) {
            Ok(addr) => match (reader.lookup(addr), format) {
                (None, _) => "-".to_string(),
                (Some(nh), Format::Id) => nh.to_string(),
                (Some(0), Format::Hop) => "none".to_string(),
                (Some(nh), Format::Hop) => hops
                    .read()
                    .expect("no panics while held")
                    .get(nh as usize - 1)
                    .map_or_else(|| format!("#{nh}"), |a| a.to_string()),
            },
            Err(e) => format!("error: {e}"),
        };
        line.clear();
        writeln!(out, "{answer}")?;
        // Answer each line at once unless more input is already buffered.
        if input.buffer().is_empty() {
            out.flush()?;
        }
    }
    out.flush()
}
