//! What a bench run shows on standard error while it works. On a terminal: indicatif's
//! spinners and bar, cleared when done. Elsewhere (a log file, a pipe, CI): one line per stage,
//! `bench: timing planb batch throughput x1, round 2/3 (14/60)...`, so that a log of a long
//! run shows that it is alive and where it is. The lines go through `note!`, so a closed
//! standard error never fails the run.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// True when progress is drawn as a bar (standard error is a terminal), false when it is
/// written as lines.
fn on_terminal() -> bool {
    std::io::stderr().is_terminal()
}

/// A spinner with a message for a step of unknown length; without a terminal, the message as
/// one line.
pub fn spinner(msg: String) -> ProgressBar {
    if !on_terminal() {
        note!("bench: {msg}...");
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    bar.set_message(msg);
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// A progress bar of `len` steps on a terminal, hidden elsewhere (for callers that report
/// their own lines).
pub fn bar(len: u64) -> ProgressBar {
    if !on_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {msg}")
    {
        bar.set_style(style);
    }
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

/// The stages of one table's bench (builds, agreement checks, timings): a bar on a terminal,
/// a line per stage elsewhere.
pub struct Stages {
    bar: ProgressBar,
    lines: bool,
    done: u64,
    len: u64,
}

impl Stages {
    /// `len` stages to come.
    pub fn new(len: u64) -> Self {
        Stages {
            bar: bar(len),
            lines: !on_terminal(),
            done: 0,
            len,
        }
    }

    /// The next stage begins.
    pub fn start(&self, what: String) {
        if self.lines {
            note!("bench: {what} ({}/{})...", self.done + 1, self.len);
        } else {
            self.bar.set_message(what);
        }
    }

    /// The current stage is done.
    pub fn finish_one(&mut self) {
        self.done += 1;
        self.bar.inc(1);
    }

    /// Runs `f` (which writes to standard error) with the bar out of the way.
    pub fn suspend<R>(&self, f: impl FnOnce() -> R) -> R {
        self.bar.suspend(f)
    }

    /// Removes the bar.
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}
