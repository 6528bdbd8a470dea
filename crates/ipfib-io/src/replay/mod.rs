//! From an update stream to a live table: the FIB changes a stream makes ([`rules`]) and
//! their submission at the recorded pace, with the time each took to become visible
//! ([`pace`]). `ipfib replay`, the C library's `ipfib_replay_*` and the DPDK example share
//! them, so one stream means the same table everywhere.

mod held;
pub mod pace;
pub mod rules;

pub use pace::{submit, visibility, PaceError, Speed, Submission, Visibility};
pub use rules::{plan, record_times, FibRules, Peers, SourceKey, Timed};
