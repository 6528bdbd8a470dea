//! `ipfib`: the command-line tool of the ipfib library. The subcommands are the variants of
//! [`Command`]; clap lists them in `ipfib --help`, the completions and the man pages, so no
//! hand-written list can go stale.
//!
//! Output errors: a reader that goes away (`ipfib ... | head`) ends the command quietly with
//! status 0; any other failure to write standard output (a full disk, `> /dev/full`) is an
//! error, status 1. Messages on standard error never fail the command and never panic: they go
//! through `note!`, which ignores write errors (a closed or broken stderr).

use std::io::{self, BufWriter, IsTerminal, StdoutLock, Write};
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};

/// `eprintln!` that ignores write errors: a message on a closed or broken standard error is
/// lost, never a panic. Every diagnostic of the CLI goes through it.
macro_rules! note {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

mod addresses;
mod bench;
mod bench_ops;
mod cleanup;
mod completions;
mod convert;
mod detail_label;
mod engine_arg;
mod family;
mod fib_args;
mod follow;
mod gen;
mod lookup;
mod man;
mod oom;
mod output;
mod replay;
mod rss;
mod save;
mod stats;

/// The system allocator, recording failures for the out-of-memory message ([`oom`]).
#[global_allocator]
static ALLOCATOR: oom::Recording = oom::Recording;

/// Exact, fast longest-prefix match for IPv4 and IPv6 forwarding tables.
#[derive(Parser)]
#[command(
    name = "ipfib",
    version,
    after_help = "`ipfib help COMMAND` or `ipfib COMMAND --help` describes a command; \
                  `ipfib man` and `ipfib completions SHELL` print a manual page and shell \
                  completions."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Look up addresses (arguments, else stdin one per line): one line per address, the next
    /// hop in decimal or `-` when no route matches.
    Lookup(lookup::Args),
    /// Describe a FIB: routes per family, prefix-length histogram, intervals, depth, bytes.
    Stats(stats::Args),
    /// Compare every engine (and peer libraries) on one table and trace.
    Bench(bench::Args),
    /// Time inserts, lookups, updates, deletes and freeing a table: LiveFib, Patricia and the
    /// kernel's BPF LPM trie (feature `bpf`).
    BenchOps(bench_ops::Args),
    /// Convert a FIB (text or MRT) to the text format.
    Convert(convert::Args),
    /// Replay a BGP update stream (MRT or text) into a live table while threads look up.
    Replay(replay::Args),
    /// Follow routers over BMP into a live table that answers lookups on a socket.
    Follow(follow::Args),
    /// Build a FIB and save it in the saved-table format, which every `--fib` opens in place.
    Save(save::Args),
    /// Generate synthetic tables and lookup traces.
    #[command(subcommand)]
    Gen(gen::Command),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::Args),
    /// Print the manual page, or write one page per subcommand with --out DIR.
    Man(man::Args),
}

/// The whole command-line definition, for the completions and the manual pages.
pub fn command() -> clap::Command {
    Cli::command()
}

/// Writes `text` to standard output and flushes it; a failure is an error naming standard
/// output (a closed pipe among them, which [`main`] then ends quietly).
pub fn write_stdout(text: &str) -> anyhow::Result<()> {
    let mut out = Stdout::default();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Standard output, locked and buffered, whose write errors say that they are about standard
/// output (keeping their kind, so a closed pipe is still recognised by [`is_broken_pipe`]).
pub struct Stdout(BufWriter<StdoutLock<'static>>);

impl Default for Stdout {
    /// Locks standard output behind a 64 KiB buffer.
    fn default() -> Self {
        Stdout(BufWriter::with_capacity(1 << 16, io::stdout().lock()))
    }
}

fn on_stdout(e: io::Error) -> io::Error {
    io::Error::new(e.kind(), format!("writing to standard output: {e}"))
}

impl Write for Stdout {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(buf).map_err(on_stdout)
    }
    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.0.write_all(buf).map_err(on_stdout)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.0.flush().map_err(on_stdout)
    }
}

/// True when the error comes from writing to a reader that went away (`EPIPE`).
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Errors print once, as `ipfib: cause: detail` (no debug dump, no backtrace; a cause whose
/// text its context already quotes is not repeated), exit status 1; usage errors are clap's,
/// status 2.
fn main() -> ExitCode {
    oom::install();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        // --help and --version go to stdout, where a write error counts like any other.
        Err(e) if !e.use_stderr() && !io::stdout().is_terminal() => {
            return match write_stdout(&e.render().to_string()) {
                Err(err) if !is_broken_pipe(&err) => {
                    note!("ipfib: {}", ipfib::error::one_line(err.as_ref()));
                    ExitCode::FAILURE
                }
                _ => ExitCode::SUCCESS,
            };
        }
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let result = match cli.command {
        Command::Lookup(args) => lookup::run(args),
        Command::Stats(args) => stats::run(args),
        Command::Bench(args) => bench::run(args),
        Command::BenchOps(args) => bench_ops::run(args),
        Command::Convert(args) => convert::run(args),
        Command::Replay(args) => replay::run(args),
        Command::Follow(args) => follow::run(args),
        Command::Save(args) => save::run(args),
        Command::Gen(cmd) => gen::run(cmd),
        Command::Completions(args) => completions::run(args),
        Command::Man(args) => man::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader of our output went away (`ipfib ... | head`): not a failure.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            note!("ipfib: {}", ipfib::error::one_line(e.as_ref()));
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every subcommand of the definition, by name (clap's `help` aside).
    fn subcommands() -> Vec<String> {
        command()
            .get_subcommands()
            .map(|c| c.get_name().to_string())
            .collect()
    }

    #[test]
    fn the_definition_is_consistent_and_help_lists_every_subcommand() {
        command().debug_assert();
        let help = command().render_help().to_string();
        let names = subcommands();
        for name in [
            "lookup", "stats", "bench", "convert", "replay", "follow", "save", "gen",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} missing");
        }
        for name in &names {
            assert!(help.contains(name.as_str()), "{name} not in\n{help}");
        }
    }

    #[test]
    fn every_engine_option_lists_the_registered_engines() {
        let mut cmd = command();
        cmd.build();
        let mut seen = 0;
        for sub in cmd.get_subcommands_mut() {
            let name = sub.get_name().to_string();
            let help = sub.render_long_help().to_string();
            if sub.get_arguments().any(|a| a.get_id() == "engine") {
                seen += 1;
                for e in ipfib::engine::engines() {
                    assert!(help.contains(e.name()), "{name}: {} missing", e.name());
                }
                assert!(!help.contains("see `ipfib"), "{name}: a pointer elsewhere");
            }
        }
        assert_eq!(seen, 6, "lookup, stats, replay, save, follow, bench-ops");
    }
}
