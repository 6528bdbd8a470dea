//! (to be written)

/// Generators.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Generate a FIB.
    Fib,
}

/// Runs the subcommand.
pub fn run(_cmd: Command) -> anyhow::Result<()> {
    anyhow::bail!("not implemented yet")
}
