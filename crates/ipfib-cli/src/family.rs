//! `--family 4|6`: the one parser every subcommand uses.

/// An address family on the command line (`4`, `v4`, `ipv4`, `6`, `v6`, `ipv6`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// IPv4.
    V4,
    /// IPv6.
    V6,
}

impl std::str::FromStr for Family {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "4" | "v4" | "ipv4" => Ok(Family::V4),
            "6" | "v6" | "ipv6" => Ok(Family::V6),
            _ => Err(format!("{s:?} is not an address family (4 or 6)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        for s in ["4", "v4", "IPv4"] {
            assert_eq!(s.parse::<Family>(), Ok(Family::V4));
        }
        for s in ["6", "v6", " ipv6 "] {
            assert_eq!(s.parse::<Family>(), Ok(Family::V6));
        }
        assert!("5".parse::<Family>().unwrap_err().contains("4 or 6"));
    }
}
