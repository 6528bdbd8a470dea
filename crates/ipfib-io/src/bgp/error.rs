//! What is wrong with a BGP message, and where.

use std::fmt;

/// A malformed BGP UPDATE (or BGP message header): the byte offset of the bad part, counted
/// from the first byte of the slice the check was given, and the problem.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at byte {offset} of the BGP message: {problem}")]
pub struct UpdateError {
    /// Offset of the bad field or entry in the checked bytes.
    pub offset: usize,
    /// What is wrong there.
    pub problem: Problem,
}

/// The part of an UPDATE a problem is in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    /// The 19-byte message header (marker, length, type).
    Header,
    /// The Withdrawn Routes field (and its length).
    WithdrawnRoutes,
    /// The Path Attributes field (and its length).
    PathAttributes,
    /// The NLRI after the path attributes (IPv4 unicast announcements).
    Nlri,
    /// The MP_REACH_NLRI attribute (RFC 4760).
    MpReach,
    /// The MP_UNREACH_NLRI attribute (RFC 4760).
    MpUnreach,
}

impl fmt::Display for Field {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Field::Header => "the message header",
            Field::WithdrawnRoutes => "the withdrawn routes",
            Field::PathAttributes => "the path attributes",
            Field::Nlri => "the NLRI",
            Field::MpReach => "MP_REACH_NLRI",
            Field::MpUnreach => "MP_UNREACH_NLRI",
        })
    }
}

/// What is wrong.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Problem {
    /// The bytes end inside a fixed-size part of `field`.
    #[error("the message ends inside {0}")]
    Truncated(Field),
    /// A length field declares more bytes than there are.
    #[error("{field} declare {declared} bytes but only {available} follow")]
    LengthOverrun {
        /// The field whose length is wrong.
        field: Field,
        /// Its declared length.
        declared: usize,
        /// The bytes there are.
        available: usize,
    },
    /// The BGP header's length is not the length of the message.
    #[error("the BGP header declares a {declared}-byte message but it has {actual} bytes")]
    MessageLength {
        /// The header's length field.
        declared: usize,
        /// The message's real length.
        actual: usize,
    },
    /// A prefix longer than its address family allows.
    #[error("prefix length {bits} in {field} (at most {max})")]
    PrefixTooLong {
        /// Where the prefix is.
        field: Field,
        /// Its length in bits.
        bits: u8,
        /// The family's maximum (32 or 128).
        max: u8,
    },
    /// A prefix (or its ADD-PATH identifier) runs past the end of its field.
    #[error("a {what} in {field} needs {needed} bytes but only {available} are left")]
    PrefixOverrun {
        /// Where the prefix is.
        field: Field,
        /// "/N prefix" or "path identifier".
        what: String,
        /// Bytes it needs.
        needed: usize,
        /// Bytes left in the field.
        available: usize,
    },
    /// A NEXT_HOP attribute whose length is not 4.
    #[error("NEXT_HOP attribute of {0} bytes (must be 4)")]
    NextHopLength(usize),
    /// An MP_REACH_NLRI next hop of a length the family does not allow.
    #[error(
        "MP_REACH_NLRI next hop of {len} bytes for AFI {afi} SAFI {safi} (allowed: {allowed})"
    )]
    MpNextHopLength {
        /// Address family.
        afi: u16,
        /// Subsequent address family.
        safi: u8,
        /// The next-hop length field.
        len: usize,
        /// The lengths the family allows.
        allowed: &'static str,
    },
    /// An attribute shorter than its fixed fields.
    #[error("{field} attribute of {len} bytes, shorter than its fixed fields")]
    AttributeTooShort {
        /// The attribute.
        field: Field,
        /// Its length.
        len: usize,
    },
    /// NEXT_HOP, MP_REACH_NLRI or MP_UNREACH_NLRI twice: which one counts is ambiguous.
    #[error("attribute type {0} appears more than once")]
    DuplicateAttribute(u8),
    /// NLRI announced with no NEXT_HOP attribute (RFC 4271 §5: mandatory with NLRI).
    #[error("NLRI announced without a NEXT_HOP attribute")]
    MissingNextHop,
}
