//! Decompression on a second thread, overlapped with parsing.
//!
//! Unpacking a bzip2 RIB costs more than parsing it (route-views6 2015: about 2.6 s of bzip2
//! against 1 s of parsing), so the two run as a pipeline: a thread fills blocks from the
//! decompressor while the parser works through the previous ones. The bytes and their order are
//! exactly those of the inner reader, so offsets are unchanged.

use std::io::{self, BufRead, Read};
use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError};
use std::thread::{self, JoinHandle};
use std::time::Duration;

/// Size of one block handed between the threads.
const BLOCK: usize = 1 << 18;
/// Blocks in flight: enough to absorb jitter, little memory (1 MiB).
const DEPTH: usize = 4;
/// How long dropping the reader waits for the thread to stop: long enough for it to finish
/// the block it is reading from a file or decompressor, short enough that a thread blocked on
/// a silent pipe does not hold anything up.
const STOP_WAIT: Duration = Duration::from_millis(500);

/// A reader whose input is read ahead by a background thread.
///
/// Dropping it (at the end of a load, or early on an error) stops the thread and waits for it,
/// so a load leaves no thread reading behind it; only a thread blocked on a source that
/// delivers nothing (a silent pipe) is left to end on its own once the source moves.
pub(crate) struct ReadAhead {
    blocks: Receiver<io::Result<Vec<u8>>>,
    current: Vec<u8>,
    pos: usize,
    finished: bool,
    worker: Option<JoinHandle<()>>,
    /// Disconnected when the worker's closure has returned.
    alive: Receiver<()>,
}

/// `inner`, read ahead on a new thread. If the OS refuses the thread, the returned reader fails
/// with that reason on its first read (never a panic, never a silently empty stream).
pub(crate) fn read_ahead(inner: Box<dyn BufRead + Send>) -> Box<dyn BufRead + Send> {
    let (tx, rx) = sync_channel(DEPTH);
    let (alive_tx, alive_rx) = sync_channel::<()>(0);
    let spawned = thread::Builder::new()
        .name("ipfib-readahead".into())
        .spawn(move || {
            let _alive = alive_tx;
            let mut inner = inner;
            loop {
                let mut block = Vec::with_capacity(BLOCK);
                let result = (&mut inner).take(BLOCK as u64).read_to_end(&mut block);
                // Bytes read before an error are delivered first, so the error surfaces at
                // the same stream position as without read-ahead.
                let (message, done) = match result {
                    Ok(0) => (Ok(block), true),
                    Ok(_) => (Ok(block), false),
                    Err(e) if block.is_empty() => (Err(e), true),
                    Err(e) => {
                        if tx.send(Ok(block)).is_err() {
                            return;
                        }
                        (Err(e), true)
                    }
                };
                // A failed send means the reader was dropped: stop reading.
                if tx.send(message).is_err() || done {
                    return;
                }
            }
        });
    match spawned {
        Ok(worker) => Box::new(ReadAhead {
            blocks: rx,
            current: Vec::new(),
            pos: 0,
            finished: false,
            worker: Some(worker),
            alive: alive_rx,
        }),
        // The OS refused a thread; `inner` went with the closure, so the load fails (with
        // the reason) on the first read rather than panicking.
        Err(e) => Box::new(Failed(Some(e))),
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        // Without a receiver the worker's next send fails, and it returns.
        let (_, closed) = sync_channel(0);
        drop(std::mem::replace(&mut self.blocks, closed));
        if let Some(worker) = self.worker.take() {
            if let Err(RecvTimeoutError::Disconnected) = self.alive.recv_timeout(STOP_WAIT) {
                let _ = worker.join();
            }
        }
    }
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for ReadAhead {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.current.len() && !self.finished {
            match self.blocks.recv() {
                Ok(Ok(block)) if !block.is_empty() => {
                    self.current = block;
                    self.pos = 0;
                }
                Ok(Ok(_)) => self.finished = true,
                Ok(Err(e)) => {
                    self.finished = true;
                    return Err(e);
                }
                Err(_) => {
                    self.finished = true;
                    return Err(io::Error::other("read-ahead thread ended unexpectedly"));
                }
            }
        }
        Ok(&self.current[self.pos..])
    }

    fn consume(&mut self, amt: usize) {
        self.pos = (self.pos + amt).min(self.current.len());
    }
}

/// The reader when no thread could be started: every read reports why.
struct Failed(Option<io::Error>);

impl Read for Failed {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Err(self
            .0
            .take()
            .unwrap_or_else(|| io::Error::other("could not start the read-ahead thread")))
    }
}

impl BufRead for Failed {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        Err(self
            .0
            .take()
            .unwrap_or_else(|| io::Error::other("could not start the read-ahead thread")))
    }
    fn consume(&mut self, _: usize) {}
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    #[test]
    fn bytes_come_through_unchanged_across_blocks() {
        let data: Vec<u8> = (0..(3 * BLOCK + 123))
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let mut r = read_ahead(Box::new(Cursor::new(data.clone())));
        let mut out = Vec::new();
        // Odd-sized reads cross block boundaries.
        let mut buf = [0u8; 1000];
        loop {
            let n = r.read(&mut buf).unwrap();
            if n == 0 {
                break;
            }
            out.extend_from_slice(&buf[..n]);
        }
        assert_eq!(out, data);
        assert_eq!(r.read(&mut buf).unwrap(), 0, "end stays the end");
    }

    /// Errors of the inner reader arrive after the bytes before them.
    #[test]
    fn inner_errors_are_passed_on() {
        struct Broken(usize);
        impl Read for Broken {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                if self.0 == 0 {
                    return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut"));
                }
                let n = self.0.min(buf.len());
                buf[..n].fill(1);
                self.0 -= n;
                Ok(n)
            }
        }
        let mut r = read_ahead(Box::new(io::BufReader::new(Broken(10))));
        let mut out = Vec::new();
        let err = r.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(out, [1; 10], "the bytes before the error");
    }

    /// Dropped before the end, the reader stops its thread and waits for it: nothing keeps
    /// reading (or holding memory) after a failed load.
    #[test]
    fn dropping_early_stops_and_joins_the_thread() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Arc;
        struct Counted(Arc<AtomicUsize>);
        impl Read for Counted {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                self.0.fetch_add(buf.len(), Ordering::SeqCst);
                buf.fill(7);
                Ok(buf.len())
            }
        }
        let read = Arc::new(AtomicUsize::new(0));
        let mut r = read_ahead(Box::new(io::BufReader::new(Counted(read.clone()))));
        let mut first = [0u8; 10];
        r.read_exact(&mut first).unwrap();
        drop(r);
        // Checked at once: the thread has ended by the time drop returns.
        assert_eq!(
            Arc::strong_count(&read),
            1,
            "the thread still holds its input"
        );
        let after_drop = read.load(Ordering::SeqCst);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(
            read.load(Ordering::SeqCst),
            after_drop,
            "still reading after drop"
        );
    }

    #[test]
    fn empty_input_is_empty() {
        let mut r = read_ahead(Box::new(Cursor::new(Vec::new())));
        let mut out = Vec::new();
        assert_eq!(r.read_to_end(&mut out).unwrap(), 0);
    }
}
