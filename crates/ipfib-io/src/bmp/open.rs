//! The two OPEN messages of a Peer Up notification (RFC 7854 §4.10): which address families
//! the router receives with ADD-PATH path identifiers (RFC 7911).
//!
//! A family's UPDATEs from the peer carry path identifiers when the peer's OPEN (the one the
//! router received) offers to send them and the router's OPEN (the one it sent) offers to
//! receive them. Capabilities come from the Optional Parameters, in RFC 5492's form or RFC
//! 9072's extended one.

use super::error::Problem;

/// ADD-PATH receive, per family of unicast routes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AddPath {
    /// IPv4 unicast prefixes carry path identifiers.
    pub v4: bool,
    /// IPv6 unicast prefixes carry path identifiers.
    pub v6: bool,
}

/// Reads a Peer Up body after the per-peer header: local address and ports, the sent OPEN,
/// the received OPEN (information TLVs after them are not needed).
pub fn peer_up(body: &[u8]) -> Result<AddPath, Problem> {
    let bad = |detail: String| Problem::Malformed {
        part: "peer up",
        detail,
    };
    let rest = body
        .get(20..)
        .ok_or_else(|| bad("shorter than its local address and ports".into()))?;
    let (sent, rest) = bgp_message(rest).map_err(|d| bad(format!("sent OPEN: {d}")))?;
    let (received, _) = bgp_message(rest).map_err(|d| bad(format!("received OPEN: {d}")))?;
    let sent = add_path_caps(sent).map_err(|d| bad(format!("sent OPEN: {d}")))?;
    let received = add_path_caps(received).map_err(|d| bad(format!("received OPEN: {d}")))?;
    let on = |afi: u16| {
        let mode = |caps: &[(u16, u8, u8)]| {
            caps.iter()
                .filter(|&&(a, s, _)| a == afi && s == 1)
                .fold(0, |m, &(_, _, sr)| m | sr)
        };
        // 1 receive, 2 send, 3 both.
        mode(&received) & 2 != 0 && mode(&sent) & 1 != 0
    };
    Ok(AddPath {
        v4: on(1),
        v6: on(2),
    })
}

/// One BGP message (header included) at the start of `bytes`, and what follows it.
fn bgp_message(bytes: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let len = match bytes.get(16..19) {
        Some(h) if h[2] == 1 => usize::from(u16::from_be_bytes([h[0], h[1]])),
        Some(h) => return Err(format!("BGP message type {} (an OPEN is type 1)", h[2])),
        None => return Err("the message ends inside the BGP header".into()),
    };
    if len < 29 || len > bytes.len() {
        return Err(format!("BGP length {len} ({} bytes left)", bytes.len()));
    }
    Ok(bytes.split_at(len))
}

/// The ADD-PATH capability entries (AFI, SAFI, send/receive) of an OPEN message.
fn add_path_caps(open: &[u8]) -> Result<Vec<(u16, u8, u8)>, String> {
    let mut len = usize::from(open[28]);
    let mut at = 29;
    let mut wide = false;
    // RFC 9072: length 255 and a first parameter type of 255 announce 2-byte lengths.
    if len == 255 && open.get(29) == Some(&255) {
        let ext = open.get(30..32).ok_or("extended parameters length cut")?;
        len = usize::from(u16::from_be_bytes([ext[0], ext[1]]));
        at = 32;
        wide = true;
    }
    let params = open
        .get(at..at + len)
        .ok_or_else(|| format!("optional parameters of {len} bytes run past the message"))?;
    let mut out = Vec::new();
    let mut i = 0;
    while i < params.len() {
        let head = if wide { 3 } else { 2 };
        let h = params.get(i..i + head).ok_or("a parameter header is cut")?;
        let plen = if wide {
            usize::from(u16::from_be_bytes([h[1], h[2]]))
        } else {
            usize::from(h[1])
        };
        let value = params
            .get(i + head..i + head + plen)
            .ok_or("a parameter runs past its field")?;
        if h[0] == 2 {
            capabilities(value, &mut out)?;
        }
        i += head + plen;
    }
    Ok(out)
}

fn capabilities(mut caps: &[u8], out: &mut Vec<(u16, u8, u8)>) -> Result<(), String> {
    while !caps.is_empty() {
        let (&[code, len], rest) = caps.split_first_chunk::<2>().ok_or("a capability is cut")?;
        let value = rest
            .get(..usize::from(len))
            .ok_or("a capability runs past its parameter")?;
        if code == 69 {
            if value.len() % 4 != 0 {
                return Err(format!("ADD-PATH capability of {} bytes", value.len()));
            }
            out.extend(
                value
                    .chunks_exact(4)
                    .map(|c| (u16::from_be_bytes([c[0], c[1]]), c[2], c[3])),
            );
        }
        caps = &rest[usize::from(len)..];
    }
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An OPEN message with these capabilities (code, value).
    pub(crate) fn open(caps: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut cap = Vec::new();
        for (code, value) in caps {
            cap.push(*code);
            cap.push(value.len() as u8);
            cap.extend(value);
        }
        let mut params = vec![2, cap.len() as u8];
        params.extend(cap);
        let mut out = vec![0xff; 16];
        out.extend(((29 + params.len()) as u16).to_be_bytes());
        out.extend([1, 4, 0xfd, 0xe8, 0, 90, 10, 0, 0, 1, params.len() as u8]);
        out.extend(params);
        out
    }

    /// A Peer Up body (after the per-peer header) with these two OPENs.
    pub(crate) fn peer_up_body(sent: &[u8], received: &[u8]) -> Vec<u8> {
        let mut out = vec![0; 20];
        out.extend(sent);
        out.extend(received);
        out
    }

    #[test]
    fn add_path_needs_send_on_the_peer_side_and_receive_on_the_router_side() {
        let ap = |entries: &[(u16, u8)]| {
            (
                69u8,
                entries
                    .iter()
                    .flat_map(|&(afi, sr)| {
                        let mut v = afi.to_be_bytes().to_vec();
                        v.extend([1, sr]);
                        v
                    })
                    .collect::<Vec<u8>>(),
            )
        };
        let body = peer_up_body(
            &open(&[ap(&[(1, 1), (2, 3)])]),
            &open(&[ap(&[(1, 2), (2, 1)])]),
        );
        assert_eq!(
            peer_up(&body).unwrap(),
            AddPath {
                v4: true,
                v6: false
            }
        );
        let body = peer_up_body(&open(&[(65, vec![0, 0, 1, 0])]), &open(&[]));
        assert_eq!(peer_up(&body).unwrap(), AddPath::default());
        let mut cut = peer_up_body(&open(&[]), &open(&[]));
        cut.pop();
        assert!(peer_up(&cut)
            .unwrap_err()
            .to_string()
            .contains("received OPEN"));
    }
}
