//! Submitting FIB changes to a live table at the pace the stream recorded, and the time from
//! each submission to the publish that made it visible.

use std::time::{Duration, Instant};

use ipfib::live::Publish;
use ipfib::{LiveError, LiveFib};

use super::Timed;

/// How fast to replay.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Speed {
    /// As fast as the live table accepts changes.
    Max,
    /// The recorded pace times this factor (positive and finite).
    Times(f64),
}

/// Why a replay stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PaceError {
    /// The speed puts a change past what the clock can hold.
    #[error(
        "speed {speed:?}: the update recorded at {at_s:.3} s would be due beyond the clock's range"
    )]
    Clock {
        /// The speed asked for.
        speed: f64,
        /// The change's recorded time, in seconds after the first.
        at_s: f64,
    },
    /// The live table refused a change.
    #[error(transparent)]
    Live(#[from] LiveError),
}

/// One submitted group of changes (those recorded at the same time).
#[derive(Clone, Copy, Debug)]
pub struct Submission {
    /// The sequence number of the group's last update.
    pub seq: u64,
    /// When it was submitted.
    pub at: Instant,
    /// How many updates it holds.
    pub len: usize,
}

/// Submits `changes` to `live` at the recorded pace × `speed` (or at once), grouped by
/// recorded time, calling `progress` with the number submitted so far about every 1,024.
/// Returns the submissions, for [`visibility`]; stops at the first error.
pub fn submit(
    live: &LiveFib,
    changes: &[Timed],
    speed: Speed,
    mut progress: impl FnMut(usize),
) -> Result<Vec<Submission>, PaceError> {
    let mut out = Vec::new();
    let start = Instant::now();
    let mut done = 0;
    for group in changes.chunk_by(|a, b| a.at_us == b.at_us) {
        if let Speed::Times(x) = speed {
            let at_s = group[0].at_us as f64 / 1e6;
            let due = Duration::try_from_secs_f64(at_s / x)
                .ok()
                .and_then(|d| start.checked_add(d))
                .ok_or(PaceError::Clock { speed: x, at_s })?;
            wait_until(due);
        }
        let at = Instant::now();
        let seq = live.apply(group.iter().map(|t| t.update.clone()))?;
        out.push(Submission {
            seq,
            at,
            len: group.len(),
        });
        done += group.len();
        if done % 1024 < group.len() {
            progress(done);
        }
    }
    Ok(out)
}

/// Waits until about `due`.
fn wait_until(due: Instant) {
    // Sleep, never spin: the readers and the rebuilder need the cores (the 2-core AMD EPYC
    // Zen 3 this was tuned on has two), and a spinning submitter would make the rebuilder wait
    // for a time slice. A sleep may overshoot by tens of µs; each update's submission time is
    // taken when it is actually submitted, so visibility is measured from there. Waits
    // shorter than the overshoot are skipped (the update goes out up to that much early).
    let now = Instant::now();
    if due > now + SLEEP_GRAIN {
        std::thread::sleep(due - now);
    }
}

/// Waits shorter than this are not slept (a sleep overshoots by about as much).
const SLEEP_GRAIN: Duration = Duration::from_micros(60);

/// Microseconds from submission to visibility, one entry per update, sorted; and the two parts
/// of it: waiting to be taken by the rebuilder (the coalescing delay, or a build or
/// compaction step in progress), and building the version that holds it.
#[derive(Clone, Debug, Default)]
pub struct Visibility {
    /// Submission to visible.
    pub total: Vec<f64>,
    /// Submission to taken by the rebuilder.
    pub waiting: Vec<f64>,
    /// Taken to visible.
    pub building: Vec<f64>,
}

impl Visibility {
    /// The `q` quantile (0..=1) of the sorted values `of` (0 when empty).
    pub fn percentile(of: &[f64], q: f64) -> f64 {
        if of.is_empty() {
            return 0.0;
        }
        let i = ((of.len() - 1) as f64 * q.clamp(0.0, 1.0)).round() as usize;
        of[i.min(of.len() - 1)]
    }
}

/// Matches submissions with the publishes that made them visible (both in order; publishes
/// from [`LiveFib::take_publishes`]). Updates no publish covers yet are left out.
pub fn visibility(submissions: &[Submission], publishes: &[Publish]) -> Visibility {
    let n = submissions.iter().map(|s| s.len).sum();
    let mut v = Visibility {
        total: Vec::with_capacity(n),
        waiting: Vec::with_capacity(n),
        building: Vec::with_capacity(n),
    };
    let us = |from: Instant, to: Instant| to.saturating_duration_since(from).as_secs_f64() * 1e6;
    let mut p = 0;
    for s in submissions {
        while p < publishes.len() && publishes[p].upto < s.seq {
            p += 1;
        }
        let Some(publish) = publishes.get(p) else {
            break;
        };
        v.total
            .extend(std::iter::repeat_n(us(s.at, publish.at), s.len));
        v.waiting
            .extend(std::iter::repeat_n(us(s.at, publish.taken), s.len));
        v.building
            .extend(std::iter::repeat_n(us(publish.taken, publish.at), s.len));
    }
    for part in [&mut v.total, &mut v.waiting, &mut v.building] {
        part.sort_by(f64::total_cmp);
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipfib::{Table, Update};

    #[test]
    fn every_change_is_submitted_and_seen() {
        let live = LiveFib::new(&Table::new(), "planb").unwrap();
        live.record_publishes(true);
        let n = |s: &str| s.parse().unwrap();
        let changes = [
            Timed {
                at_us: 0,
                update: Update::Insert(n("10.0.0.0/8"), 1),
            },
            Timed {
                at_us: 0,
                update: Update::Insert(n("2001:db8::/32"), 2),
            },
            Timed {
                at_us: 2_000,
                update: Update::Remove(n("10.0.0.0/8")),
            },
        ];
        let mut seen = Vec::new();
        let subs = submit(&live, &changes, Speed::Times(1.0), |d| seen.push(d)).unwrap();
        live.flush().unwrap();
        assert_eq!(subs.iter().map(|s| s.len).collect::<Vec<_>>(), [2, 1]);
        assert!(subs[1].at.duration_since(subs[0].at) >= Duration::from_micros(1_900));
        let v = visibility(&subs, &live.take_publishes());
        assert_eq!(v.total.len(), 3);
        assert!(v.total.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(live.table().len(), 1);
        let err = submit(&live, &changes[2..], Speed::Times(1e-300), |_| {}).unwrap_err();
        assert!(matches!(err, PaceError::Clock { .. }), "{err}");
        assert_eq!(Visibility::percentile(&[], 0.5), 0.0);
        assert_eq!(Visibility::percentile(&[1.0, 2.0, 3.0], 0.5), 2.0);
    }
}
