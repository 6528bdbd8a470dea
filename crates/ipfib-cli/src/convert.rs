//! (to be written)

/// Arguments.
#[derive(clap::Args)]
pub struct Args {}

/// Runs the subcommand.
pub fn run(_args: Args) -> anyhow::Result<()> {
    anyhow::bail!("not implemented yet")
}
