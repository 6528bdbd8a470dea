//! A whole UPDATE message body (RFC 4271 §4.3), and the BGP message header around it.

use super::attributes::check_attributes;
use super::error::{Field, Problem, UpdateError};
use super::nlri::check_prefixes;

/// Length of the BGP message header: marker (16), length (2), type (1).
pub const HEADER_LEN: usize = 19;

/// The BGP message type of the UPDATE message.
pub const UPDATE: u8 = 2;

/// Splits a whole BGP message (header included) into its type and body. The header's length
/// must be the message's length: a shorter one would leave bytes unread, a longer one means
/// the message was cut. The marker is not checked (RFC 4271 fixes it to all ones; a capture
/// records what was received, and the marker carries no route).
pub fn split_message(message: &[u8]) -> Result<(u8, &[u8]), UpdateError> {
    if message.len() < HEADER_LEN {
        return Err(UpdateError {
            offset: 0,
            problem: Problem::Truncated(Field::Header),
        });
    }
    let declared = usize::from(u16::from_be_bytes([message[16], message[17]]));
    if declared != message.len() {
        return Err(UpdateError {
            offset: 16,
            problem: Problem::MessageLength {
                declared,
                actual: message.len(),
            },
        });
    }
    Ok((message[18], &message[HEADER_LEN..]))
}

/// Checks an UPDATE message body (what follows the 19-byte header) field by field: the
/// withdrawn routes (every prefix at most /32 and within the field), the path attributes (each
/// one's framing, NEXT_HOP exactly 4 bytes, MP_REACH_NLRI and MP_UNREACH_NLRI with their next
/// hops and prefixes), the NLRI, and a NEXT_HOP wherever there is NLRI. With `add_path` every
/// prefix has a 4-byte path identifier first (RFC 7911). Offsets in the error count from the
/// body's first byte. Never panics, whatever the bytes.
pub fn check_update(body: &[u8], add_path: bool) -> Result<(), UpdateError> {
    let withdrawn = field(body, 0, Field::WithdrawnRoutes)?;
    check_prefixes(withdrawn, 2, Field::WithdrawnRoutes, 32, add_path)?;
    let attrs_at = 2 + withdrawn.len();
    let attrs = field(body, attrs_at, Field::PathAttributes)?;
    let seen = check_attributes(attrs, attrs_at + 2, add_path)?;
    let nlri_at = attrs_at + 2 + attrs.len();
    let nlri = &body[nlri_at..];
    check_prefixes(nlri, nlri_at, Field::Nlri, 32, add_path)?;
    if !nlri.is_empty() && !seen.next_hop {
        return Err(UpdateError {
            offset: nlri_at,
            problem: Problem::MissingNextHop,
        });
    }
    Ok(())
}

/// The bytes of a field with a 2-byte length at `at`.
fn field(body: &[u8], at: usize, field: Field) -> Result<&[u8], UpdateError> {
    let Some(len) = body.get(at..at + 2) else {
        return Err(UpdateError {
            offset: at,
            problem: Problem::Truncated(field),
        });
    };
    let declared = usize::from(u16::from_be_bytes([len[0], len[1]]));
    let available = body.len() - at - 2;
    if declared > available {
        return Err(UpdateError {
            offset: at,
            problem: Problem::LengthOverrun {
                field,
                declared,
                available,
            },
        });
    }
    Ok(&body[at + 2..at + 2 + declared])
}
