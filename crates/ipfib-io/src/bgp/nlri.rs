//! Prefix lists (RFC 4271 §4.3 withdrawn routes and NLRI, RFC 4760 MP_(UN)REACH_NLRI, with the
//! RFC 7911 ADD-PATH identifier): every entry's length within the family and its bytes within
//! the field.

use super::error::{Field, Problem, UpdateError};

/// Checks a prefix list that starts at `base` of the message: each entry is an optional 4-byte
/// path identifier, a length byte of at most `max_bits`, and the bytes that hold the prefix.
pub(crate) fn check_prefixes(
    bytes: &[u8],
    base: usize,
    field: Field,
    max_bits: u8,
    add_path: bool,
) -> Result<(), UpdateError> {
    let mut at = 0;
    while at < bytes.len() {
        let left = bytes.len() - at;
        if add_path {
            if left < 5 {
                return Err(UpdateError {
                    offset: base + at,
                    problem: Problem::PrefixOverrun {
                        field,
                        what: "path identifier and prefix length".into(),
                        needed: 5,
                        available: left,
                    },
                });
            }
            at += 4;
        }
        let bits = bytes[at];
        if bits > max_bits {
            return Err(UpdateError {
                offset: base + at,
                problem: Problem::PrefixTooLong {
                    field,
                    bits,
                    max: max_bits,
                },
            });
        }
        let needed = usize::from(bits).div_ceil(8);
        let available = bytes.len() - at - 1;
        if needed > available {
            return Err(UpdateError {
                offset: base + at,
                problem: Problem::PrefixOverrun {
                    field,
                    what: format!("/{bits} prefix"),
                    needed,
                    available,
                },
            });
        }
        at += 1 + needed;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(bytes: &[u8], max: u8, add_path: bool) -> Result<(), UpdateError> {
        check_prefixes(bytes, 100, Field::Nlri, max, add_path)
    }

    #[test]
    fn well_formed_lists_pass() {
        assert!(check(&[], 32, false).is_ok());
        assert!(check(&[0, 8, 10, 24, 192, 0, 2, 32, 1, 2, 3, 4], 32, false).is_ok());
        assert!(check(&[0, 0, 0, 7, 16, 10, 1], 32, true).is_ok());
        assert!(check(&[128; 17], 128, false).is_ok());
    }

    #[test]
    fn bad_entries_are_named_by_offset() {
        let e = check(&[8, 10, 33, 1, 2, 3, 4, 5], 32, false).unwrap_err();
        assert_eq!(e.offset, 102);
        assert!(matches!(e.problem, Problem::PrefixTooLong { bits: 33, .. }));
        let e = check(&[8, 10, 24, 192, 0], 32, false).unwrap_err();
        assert_eq!(e.offset, 102);
        assert!(
            matches!(
                e.problem,
                Problem::PrefixOverrun {
                    needed: 3,
                    available: 2,
                    ..
                }
            ),
            "{e}"
        );
        assert_eq!(check(&[129], 128, false).unwrap_err().offset, 100);
        let e = check(&[0, 0, 0, 1], 32, true).unwrap_err();
        assert!(e.to_string().contains("path identifier"), "{e}");
    }
}
