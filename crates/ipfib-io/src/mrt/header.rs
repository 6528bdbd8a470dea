//! The MRT common header (RFC 6396 §2): what is needed to recognise an MRT stream by its first
//! bytes, available even without the `mrt` feature so such a file gets a clear error.

/// Length of the common header.
pub(crate) const HEADER_LEN: usize = 12;

/// Bodies longer than this are taken as a corrupt header rather than allocated: the largest
/// real records (a PEER_INDEX_TABLE, a prefix seen by every peer) are a few hundred KiB.
pub(crate) const MAX_BODY: u32 = 16 << 20;

/// MRT type numbers this crate distinguishes (RFC 6396 §4, IANA "MRT Type Codes").
pub(crate) mod types {
    /// Deprecated START (collector events, types 1 to 4 up to PEER_DOWN).
    #[cfg(feature = "mrt")]
    pub const START: u16 = 1;
    /// Deprecated PEER_DOWN, the last of the collector event types.
    #[cfg(feature = "mrt")]
    pub const PEER_DOWN: u16 = 4;
    /// Deprecated BGP type used by the earliest collectors: update messages.
    #[cfg(feature = "mrt")]
    pub const BGP: u16 = 5;
    /// Deprecated BGP4PLUS: BGP messages over IPv6.
    #[cfg(feature = "mrt")]
    pub const BGP4PLUS: u16 = 9;
    /// Deprecated BGP4PLUS_01, the same with a later draft's MP_REACH encoding.
    #[cfg(feature = "mrt")]
    pub const BGP4PLUS_01: u16 = 10;
    /// TABLE_DUMP (v1): one RIB entry (or, in early RIS dumps, several) per record.
    #[cfg(feature = "mrt")]
    pub const TABLE_DUMP: u16 = 12;
    /// TABLE_DUMP_V2: a PEER_INDEX_TABLE then one record per prefix with all its paths.
    #[cfg(feature = "mrt")]
    pub const TABLE_DUMP_V2: u16 = 13;
    /// BGP4MP: BGP messages and state changes as received.
    #[cfg(feature = "mrt")]
    pub const BGP4MP: u16 = 16;
    /// BGP4MP with a microsecond timestamp after the header.
    #[cfg(feature = "mrt")]
    pub const BGP4MP_ET: u16 = 17;
    /// IS-IS with a microsecond timestamp.
    #[cfg(feature = "mrt")]
    pub const ISIS_ET: u16 = 33;
    /// OSPFv3 with a microsecond timestamp.
    #[cfg(feature = "mrt")]
    pub const OSPFV3_ET: u16 = 49;

    /// Every type RFC 6396 defines, current or deprecated.
    pub fn is_known(t: u16) -> bool {
        matches!(t, 1..=13 | 16 | 17 | 32 | 33 | 48 | 49)
    }

    /// Types whose header is followed by a 4-byte microsecond field counted in the length.
    #[cfg(feature = "mrt")]
    pub fn is_extended(t: u16) -> bool {
        matches!(t, BGP4MP_ET | ISIS_ET | OSPFV3_ET)
    }
}

/// True when `first` (the first bytes of a decompressed file) starts with a plausible MRT common
/// header: a type RFC 6396 defines and a body length this reader would accept. A text FIB can
/// never match, because the high byte of every defined type is 0 and text has no NUL bytes.
pub(crate) fn looks_like_mrt(first: &[u8]) -> bool {
    if first.len() < HEADER_LEN {
        return false;
    }
    let kind = u16::from_be_bytes([first[4], first[5]]);
    let length = u32::from_be_bytes([first[8], first[9], first[10], first[11]]);
    types::is_known(kind) && length <= MAX_BODY
}

/// The MRT type of the first record, if the stream looks like MRT (see [`looks_like_mrt`]).
#[cfg(feature = "mrt")]
pub(crate) fn first_type(first: &[u8]) -> Option<u16> {
    looks_like_mrt(first).then(|| u16::from_be_bytes([first[4], first[5]]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(kind: u16, subtype: u16, length: u32) -> Vec<u8> {
        let mut out = 1_000_000u32.to_be_bytes().to_vec();
        out.extend(kind.to_be_bytes());
        out.extend(subtype.to_be_bytes());
        out.extend(length.to_be_bytes());
        out
    }

    #[test]
    fn sniffing_accepts_mrt_headers_only() {
        assert!(looks_like_mrt(&header(13, 1, 0)));
        assert!(looks_like_mrt(&header(12, 1, MAX_BODY)));
        assert!(!looks_like_mrt(&header(12, 1, MAX_BODY + 1)));
        assert!(!looks_like_mrt(b"10.0.0.0/8 1\n192.0.2.0/24 2\n"));
        assert!(!looks_like_mrt(b"# a comment\n"));
        assert!(!looks_like_mrt(&header(99, 1, 0)));
        assert!(!looks_like_mrt(&[0; 5]));
    }

    #[cfg(feature = "mrt")]
    #[test]
    fn the_first_type_is_read_from_the_header() {
        assert_eq!(first_type(&header(16, 4, 0)), Some(16));
        assert_eq!(first_type(b"2001:db8::/32 1\n"), None);
    }
}
