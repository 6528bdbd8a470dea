//! BMP over TCP into a live table: an accept loop, one reader thread per session (framing,
//! decoding and every check happen there), a bounded channel, and the station in the caller's
//! thread making one [`LiveFib::apply`] per message.
//!
//! Backpressure: the channel holds at most [`ListenConfig::channel`] messages for all
//! sessions together; when it is full a reader stops reading and TCP slows its router down.
//! Memory is bounded by the routes held, the channel, one message buffer per session, and
//! the live table's own queue.

use std::collections::HashMap;
use std::io::{self, BufReader};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use ipfib::LiveFib;

use super::frame::{kind, Framer};
use super::header::View;
use super::session::{Families, Session};
use super::station::{Event, Notice, Station, StationConfig};
use crate::replay::Submission;

/// How to listen.
#[derive(Clone, Debug)]
pub struct ListenConfig {
    /// The station's rules and limits.
    pub station: StationConfig,
    /// The RIB followed.
    pub view: View,
    /// What the live table's engine holds.
    pub families: Families,
    /// Sessions at once; more are accepted and closed at once.
    pub max_sessions: usize,
    /// Messages queued between the sessions and the station.
    pub channel: usize,
}

/// Why following stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FollowError {
    /// The live table refused a batch the station had checked (it was closed, or a build
    /// failed).
    #[error("the live table refused a change: {0}")]
    Live(#[from] ipfib::LiveError),
    /// Accepting connections failed.
    #[error("accepting BMP sessions on {addr}: {source}")]
    Accept {
        /// The listening address.
        addr: String,
        /// The error.
        source: io::Error,
    },
}

/// What the station did, after each event and at least every [`TICK`].
pub struct Observed<'a> {
    /// The station after the event.
    pub station: &'a Station,
    /// Log lines.
    pub notices: &'a [Notice],
    /// The batch applied to the live table, if any (`at` is when the message finished
    /// arriving, so its visibility counts from receipt).
    pub submission: Option<Submission>,
}

/// The longest the station waits without calling its observer.
pub const TICK: Duration = Duration::from_millis(100);

enum Feed {
    Event(Event, Instant),
    Refused(SocketAddr),
}

/// Accepts BMP sessions on `listener` and follows them into `live` until `stop` is set,
/// calling `observe` after every event and every [`TICK`]. Returns the station (for a final
/// report).
pub fn follow(
    listener: TcpListener,
    config: ListenConfig,
    live: &LiveFib,
    stop: &AtomicBool,
    mut observe: impl FnMut(Observed<'_>),
) -> Result<Station, FollowError> {
    let addr = listener
        .local_addr()
        .map_or_else(|_| "?".to_string(), |a| a.to_string());
    listener
        .set_nonblocking(true)
        .map_err(|source| FollowError::Accept {
            addr: addr.clone(),
            source,
        })?;
    let (tx, rx) = mpsc::sync_channel::<Feed>(config.channel.max(1));
    let streams: Mutex<HashMap<u64, TcpStream>> = Mutex::new(HashMap::new());
    let active = AtomicUsize::new(0);
    let next_session = AtomicU64::new(1);
    let mut station = Station::new(config.station.clone());
    let config = &config;
    let result = std::thread::scope(|s| {
        let (streams, active, next_session) = (&streams, &active, &next_session);
        let accept_tx = tx.clone();
        let acceptor = s.spawn(move || -> Result<(), io::Error> {
            while !stop.load(Ordering::Relaxed) {
                let (stream, router) = match listener.accept() {
                    Ok(c) => c,
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) if e.kind() == io::ErrorKind::ConnectionAborted => continue,
                    Err(e) => return Err(e),
                };
                if active.load(Ordering::Relaxed) >= config.max_sessions {
                    let _ = stream.shutdown(Shutdown::Both);
                    if accept_tx.send(Feed::Refused(router)).is_err() {
                        break;
                    }
                    continue;
                }
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_nodelay(true);
                let session = next_session.fetch_add(1, Ordering::Relaxed);
                let Ok(clone) = stream.try_clone() else {
                    continue;
                };
                streams
                    .lock()
                    .expect("no panics while held")
                    .insert(session, clone);
                active.fetch_add(1, Ordering::Relaxed);
                let tx = accept_tx.clone();
                s.spawn(move || {
                    read_session(stream, router, session, config, &tx);
                    streams
                        .lock()
                        .expect("no panics while held")
                        .remove(&session);
                    active.fetch_sub(1, Ordering::Relaxed);
                });
            }
            Ok(())
        });
        drop(tx);
        let result = station_loop(&rx, &mut station, live, stop, streams, &mut observe);
        stop.store(true, Ordering::Relaxed);
        for stream in streams.lock().expect("no panics while held").values() {
            let _ = stream.shutdown(Shutdown::Both);
        }
        drop(rx);
        let accepted = acceptor.join().expect("the acceptor does not panic");
        result?;
        accepted.map_err(|source| FollowError::Accept { addr, source })
    });
    result.map(|()| station)
}

/// Reads one session until it ends, passing each checked message on.
fn read_session(
    stream: TcpStream,
    router: SocketAddr,
    session: u64,
    config: &ListenConfig,
    tx: &mpsc::SyncSender<Feed>,
) {
    let send = |e: Event| tx.send(Feed::Event(e, Instant::now())).is_ok();
    if !send(Event::Opened { session, router }) {
        return;
    }
    let mut decoder = Session::new(router, config.view, config.families.clone());
    let mut framer = Framer::new(BufReader::with_capacity(1 << 16, stream));
    let error = loop {
        let frame = match framer.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(e) => break Some(decoder.error(e.offset, e.kind, None, e.problem)),
        };
        let offset = frame.offset;
        let message = match decoder.decode(&frame) {
            Ok(m) => m,
            Err(e) => break Some(e),
        };
        let end = matches!(frame.kind, kind::TERMINATION);
        if !send(Event::Message {
            session,
            message,
            offset,
        }) {
            return;
        }
        if end {
            break None;
        }
    };
    let _ = send(Event::Closed {
        session,
        error: error.map(|e| *e),
    });
}

fn station_loop(
    rx: &mpsc::Receiver<Feed>,
    station: &mut Station,
    live: &LiveFib,
    stop: &AtomicBool,
    streams: &Mutex<HashMap<u64, TcpStream>>,
    observe: &mut impl FnMut(Observed<'_>),
) -> Result<(), FollowError> {
    while !stop.load(Ordering::Relaxed) {
        let now = Instant::now();
        let wait = station
            .next_deadline()
            .map_or(TICK, |d| d.saturating_duration_since(now).min(TICK));
        let (outcome, received) = match rx.recv_timeout(wait) {
            Ok(Feed::Event(event, at)) => (station.handle(event, Instant::now()), at),
            Ok(Feed::Refused(router)) => {
                let notice = Notice::Refused { router };
                observe(Observed {
                    station,
                    notices: std::slice::from_ref(&notice),
                    submission: None,
                });
                continue;
            }
            Err(RecvTimeoutError::Timeout) => (station.expire(Instant::now()), Instant::now()),
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
        };
        if let Some(session) = outcome.close {
            if let Some(s) = streams.lock().expect("no panics while held").get(&session) {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        let submission = if outcome.updates.is_empty() {
            None
        } else {
            let len = outcome.updates.len();
            let seq = live.apply(outcome.updates)?;
            Some(Submission {
                seq,
                at: received,
                len,
            })
        };
        observe(Observed {
            station,
            notices: &outcome.notices,
            submission,
        });
    }
    Ok(())
}
