//! `--engine NAME`: any engine of the library's registry, checked when the arguments are
//! parsed (so a typo fails before a table is loaded) and listed in the help.

use ipfib::engine::{self, EngineInfo};

/// Parses an engine name against the registry.
pub fn parse(name: &str) -> Result<&'static EngineInfo, String> {
    engine::by_name(name).map_err(|e| e.to_string())
}
