//! `ipfib man [--out DIR]`: manual pages generated from the command-line definitions
//! (clap_mangen), so they never disagree with `--help`: `ipfib.1` on standard output, or with
//! `--out` that page and one per subcommand (`ipfib-lookup.1`, `ipfib-gen-fib.1`, ...) written
//! into a directory.

use std::path::{Path, PathBuf};

use anyhow::Context as _;
use clap_mangen::Man;

const AFTER_HELP: &str = "\
Examples:
    ipfib man | man -l -
    ipfib man --out target/man && man -l target/man/ipfib-bench.1";

/// Arguments of `ipfib man`.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// Write ipfib.1 and one page per subcommand into DIR (created if missing) instead of
    /// printing ipfib.1 to standard output.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

/// The command tree the pages describe: the CLI without clap's `help` subcommand.
fn root() -> clap::Command {
    let mut cmd = crate::command().disable_help_subcommand(true);
    cmd.build();
    cmd
}

/// The top page, `ipfib.1`, as roff.
pub fn top_page() -> anyhow::Result<String> {
    let mut out = Vec::new();
    Man::new(root())
        .render(&mut out)
        .context("rendering the manual page")?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// Every page: the command's, then its subcommands' depth first.
fn pages(cmd: clap::Command, out: &mut Vec<Man>) {
    let subs: Vec<clap::Command> = cmd
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    out.push(Man::new(cmd));
    for sub in subs {
        pages(sub, out);
    }
}

/// Writes every page into `dir`; returns the files written.
pub fn write_pages(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut all = Vec::new();
    pages(root(), &mut all);
    all.iter()
        .map(|page| {
            let path = dir.join(page.get_filename());
            page.generate_to(dir)
                .with_context(|| format!("writing {}", path.display()))
        })
        .collect()
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    match args.out {
        None => crate::write_stdout(&top_page()?),
        Some(dir) => {
            for path in write_pages(&dir)? {
                note!("wrote {}", path.display());
            }
            Ok(())
        }
    }
}
