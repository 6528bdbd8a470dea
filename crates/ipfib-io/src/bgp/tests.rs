//! The UPDATE checks on hand-built messages: each malformed case is named by its offset, and
//! well-formed messages of every shape pass.

use super::*;

const ORIGIN: [u8; 4] = [0x40, 1, 1, 0];
const NEXT_HOP: [u8; 7] = [0x40, 3, 4, 192, 0, 2, 1];

/// An UPDATE body from its three fields.
fn body(withdrawn: &[u8], attrs: &[u8], nlri: &[u8]) -> Vec<u8> {
    let mut out = (withdrawn.len() as u16).to_be_bytes().to_vec();
    out.extend(withdrawn);
    out.extend((attrs.len() as u16).to_be_bytes());
    out.extend(attrs);
    out.extend(nlri);
    out
}

fn attrs(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

/// MP_REACH_NLRI for AFI/SAFI with a next hop of `nh_len` bytes.
fn mp_reach(afi: u16, safi: u8, nh_len: u8, nlri: &[u8]) -> Vec<u8> {
    let mut v = afi.to_be_bytes().to_vec();
    v.extend([safi, nh_len]);
    v.extend(vec![0x20; usize::from(nh_len)]);
    v.push(0);
    v.extend(nlri);
    let mut out = vec![0x90, 14];
    out.extend((v.len() as u16).to_be_bytes());
    out.extend(v);
    out
}

fn problem(b: &[u8]) -> (usize, Problem) {
    let e = check_update(b, false).unwrap_err();
    (e.offset, e.problem)
}

#[test]
fn well_formed_updates_pass() {
    let nh = attrs(&[&ORIGIN, &NEXT_HOP]);
    assert!(
        check_update(&body(&[], &[], &[]), false).is_ok(),
        "end-of-RIB"
    );
    assert!(check_update(&body(&[8, 10], &[], &[]), false).is_ok());
    assert!(check_update(&body(&[], &nh, &[8, 10, 0]), false).is_ok());
    let v6 = mp_reach(2, 1, 32, &[32, 0x20, 1, 0xd, 0xb8, 0]);
    assert!(check_update(&body(&[], &attrs(&[&ORIGIN, &v6]), &[]), false).is_ok());
    // RFC 8950: IPv4 NLRI, IPv6 next hop; a VPN family's NLRI are not decoded.
    let v4v6 = mp_reach(1, 1, 16, &[24, 10, 0, 0]);
    assert!(check_update(&body(&[], &v4v6, &[]), false).is_ok());
    assert!(check_update(&body(&[], &mp_reach(1, 128, 12, &[200; 9]), &[]), false).is_ok());
    // ADD-PATH: a path identifier before every prefix.
    assert!(check_update(&body(&[0, 0, 0, 1, 8, 10], &nh, &[0, 0, 0, 2, 0]), true).is_ok());
}

#[test]
fn each_malformed_case_is_named_at_its_offset() {
    let nh = attrs(&[&ORIGIN, &NEXT_HOP]);
    // NLRI starts after 2 + 0 + 2 + 11 bytes = 15.
    let (at, p) = problem(&body(&[], &nh, &[8, 10, 33, 1, 2, 3, 4, 5]));
    assert_eq!(at, 17);
    assert!(matches!(
        p,
        Problem::PrefixTooLong {
            field: Field::Nlri,
            bits: 33,
            max: 32
        }
    ));
    let (at, p) = problem(&body(&[], &nh, &[8, 10, 24, 10, 1]));
    assert_eq!(at, 17);
    assert!(matches!(
        p,
        Problem::PrefixOverrun {
            field: Field::Nlri,
            ..
        }
    ));
    let (at, p) = problem(&body(&[], &attrs(&[&ORIGIN, &[0x40, 3, 3, 1, 2, 3]]), &[]));
    assert_eq!((at, p), (8, Problem::NextHopLength(3)));
    // MP_REACH at 8; its value at 12; the next-hop length byte at 15.
    let (at, p) = problem(&body(&[], &attrs(&[&ORIGIN, &mp_reach(2, 1, 7, &[])]), &[]));
    assert_eq!(at, 15);
    assert!(matches!(p, Problem::MpNextHopLength { len: 7, .. }), "{p}");
    // NLRI at 12 + 4 + 16 + 1 = 33.
    let v6 = mp_reach(2, 1, 16, &[129, 0, 0]);
    let (at, p) = problem(&body(&[], &attrs(&[&ORIGIN, &v6]), &[]));
    assert_eq!(at, 33);
    assert!(matches!(
        p,
        Problem::PrefixTooLong {
            field: Field::MpReach,
            bits: 129,
            max: 128
        }
    ));
    let (at, p) = problem(&body(&[8, 10, 40, 1, 2, 3, 4, 5, 24, 192, 0, 2], &[], &[]));
    assert_eq!(at, 4);
    assert!(matches!(
        p,
        Problem::PrefixTooLong {
            field: Field::WithdrawnRoutes,
            ..
        }
    ));
    let (at, p) = problem(&body(&[], &ORIGIN, &[8, 10]));
    assert_eq!((at, p), (8, Problem::MissingNextHop));
    let twice = attrs(&[&ORIGIN, &NEXT_HOP, &NEXT_HOP]);
    assert_eq!(
        problem(&body(&[], &twice, &[8, 10])).1,
        Problem::DuplicateAttribute(3)
    );
    let unreach = [0x80, 15, 5, 0, 1, 1, 33, 0];
    let p = problem(&body(&[], &unreach, &[])).1;
    assert!(matches!(
        p,
        Problem::PrefixTooLong {
            field: Field::MpUnreach,
            ..
        }
    ));
}

#[test]
fn lengths_past_the_end_are_overruns() {
    assert!(matches!(
        problem(&[0]).1,
        Problem::Truncated(Field::WithdrawnRoutes)
    ));
    assert!(matches!(
        problem(&[0, 9, 8, 10]).1,
        Problem::LengthOverrun {
            field: Field::WithdrawnRoutes,
            declared: 9,
            available: 2
        }
    ));
    assert!(matches!(
        problem(&[0, 0, 0]).1,
        Problem::Truncated(Field::PathAttributes)
    ));
    // An attribute declaring 200 bytes in a 4-byte field; an extended header cut short.
    let (at, p) = problem(&body(&[], &[0x40, 1, 200, 0], &[]));
    assert_eq!(at, 4);
    assert!(
        matches!(p, Problem::LengthOverrun { declared: 200, .. }),
        "{p}"
    );
    assert!(matches!(
        problem(&body(&[], &[0x50, 1, 0], &[])).1,
        Problem::Truncated(Field::PathAttributes)
    ));
    assert!(matches!(
        problem(&body(&[], &[0x80, 14, 2, 0, 2], &[])).1,
        Problem::AttributeTooShort {
            field: Field::MpReach,
            len: 2
        }
    ));
}

#[test]
fn the_message_header_length_must_be_the_message_length() {
    let mut m = vec![0xff; 16];
    m.extend([0, 23, 2, 0, 0, 0, 0]);
    assert_eq!(split_message(&m).unwrap(), (UPDATE, &[0u8, 0, 0, 0][..]));
    m.push(0);
    assert!(matches!(
        split_message(&m).unwrap_err().problem,
        Problem::MessageLength { .. }
    ));
    assert!(split_message(&m[..10]).is_err());
}

#[test]
fn arbitrary_bytes_never_panic() {
    // Every short byte string over a few interesting values, as an UPDATE body.
    let values = [
        0u8, 1, 2, 3, 4, 8, 14, 15, 16, 32, 33, 0x10, 0x90, 128, 129, 255,
    ];
    let mut buf = Vec::new();
    for len in 0..=5u32 {
        let n = values.len().pow(len);
        for mut i in 0..n {
            buf.clear();
            for _ in 0..len {
                buf.push(values[i % values.len()]);
                i /= values.len();
            }
            let _ = check_update(&buf, false);
            let _ = check_update(&buf, true);
            let _ = split_message(&buf);
        }
    }
}
