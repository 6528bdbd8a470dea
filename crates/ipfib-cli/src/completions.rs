//! `ipfib completions SHELL`: a shell completion script generated from the command-line
//! definitions (clap_complete), printed to standard output. It completes subcommands, options
//! and the values clap knows (engine names, modes, families, shells).

use clap_complete::Shell;

const AFTER_HELP: &str = "\
Install, for example:
    ipfib completions bash > ~/.local/share/bash-completion/completions/ipfib
    ipfib completions zsh > ~/.zfunc/_ipfib        # with ~/.zfunc in $fpath, before compinit
    ipfib completions fish > ~/.config/fish/completions/ipfib.fish
    ipfib completions elvish >> ~/.config/elvish/rc.elv
    ipfib completions powershell >> $PROFILE";

/// Arguments of `ipfib completions`.
#[derive(clap::Args)]
#[command(after_help = AFTER_HELP)]
pub struct Args {
    /// The shell to complete for.
    #[arg(value_name = "SHELL")]
    shell: Shell,
}

/// The completion script for `shell`.
pub fn script(shell: Shell) -> String {
    let mut cmd = crate::command();
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut cmd, "ipfib", &mut out);
    String::from_utf8_lossy(&out).into_owned()
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<()> {
    crate::write_stdout(&script(args.shell))
}
