//! `--engine NAME`: any engine of the library's registry, checked when the arguments are
//! parsed (so a typo fails before a table is loaded) and listed in the help and the shell
//! completions, read from the registry at run time (a new engine is listed without editing
//! the CLI).

use std::ffi::OsStr;

use clap::builder::{PossibleValue, TypedValueParser};
use ipfib::engine::{self, EngineInfo};

/// Parses an engine name against the registry.
pub fn parse(name: &str) -> Result<&'static EngineInfo, String> {
    engine::by_name(name).map_err(|e| e.to_string())
}

/// The value parser of every `--engine`: [`parse`] (ASCII case ignored, an unknown name is a
/// usage error listing the known ones), with the registered engines as the possible values
/// that `--help` prints (`-h` the names, `--help` each with its one-line summary) and the
/// completions offer.
#[derive(Clone, Copy, Debug, Default)]
pub struct Engines;

impl TypedValueParser for Engines {
    type Value = &'static EngineInfo;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<Self::Value, clap::Error> {
        parse.parse_ref(cmd, arg, value)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(
            engine::engines()
                .iter()
                .map(|e| PossibleValue::new(e.name()).help(e.summary())),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        /// Engine.
        #[arg(long, default_value = "planb", value_parser = Engines)]
        engine: &'static EngineInfo,
    }

    #[test]
    fn every_registered_engine_parses_and_is_listed() {
        for e in engine::engines() {
            let upper = e.name().to_ascii_uppercase();
            let cli = Cli::try_parse_from(["x", "--engine", &upper]).unwrap();
            assert_eq!(cli.engine.name(), e.name());
        }
        let listed: Vec<String> = Engines
            .possible_values()
            .unwrap()
            .map(|v| v.get_name().to_string())
            .collect();
        let names: Vec<&str> = engine::engines().iter().map(|e| e.name()).collect();
        assert_eq!(listed, names);
    }

    #[test]
    fn an_unknown_engine_is_a_usage_error_naming_the_known_ones() {
        let err = Cli::try_parse_from(["x", "--engine", "nosuch"])
            .err()
            .unwrap();
        assert_eq!(err.kind(), clap::error::ErrorKind::ValueValidation);
        let text = err.to_string();
        assert!(text.contains("nosuch") && text.contains("planb"), "{text}");
    }
}
