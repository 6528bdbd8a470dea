//! IPv6 text of 16 to 39 bytes parsed with byte shuffles on aarch64 (NEON): the same steps
//! as `ipv6_x86` (three overlapping 16-byte windows classified into masks, the form checked
//! on the masks, each of the 32 digit slots gathered from the window holding its digit), with
//! `tbl` for the gathers and bit-weighted sums for the masks.

use std::arch::aarch64::*;

use super::form::{self, Form};
use crate::cpu::Neon;

/// The address `s` (16 to 39 bytes) spells in the plain form (hex groups, at most one `::`),
/// by the rules of `Ipv6Addr::from_str`; `None` for anything else (the caller's parser then
/// decides).
#[inline]
pub(super) fn ipv6(s: &[u8], _: Neon) -> Option<u128> {
    if !(16..=39).contains(&s.len()) {
        return None;
    }
    // SAFETY: the token proves the CPU has NEON; the length is checked above.
    unsafe { ipv6_neon(s) }
}

/// The high bit of each byte of `x` (each 0 or 0xFF) as bit `i` for byte `i`.
#[inline]
#[target_feature(enable = "neon")]
fn bits(x: uint8x16_t) -> u64 {
    const WEIGHTS: [u8; 16] = [1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128];
    // SAFETY: the load reads the 16 bytes of `WEIGHTS`.
    let w = vandq_u8(x, unsafe { vld1q_u8(WEIGHTS.as_ptr()) });
    u64::from(vaddv_u8(vget_low_u8(w))) | (u64::from(vaddv_u8(vget_high_u8(w))) << 8)
}

/// (hex digits, colons) of a 16-byte window as bit masks.
#[inline]
#[target_feature(enable = "neon")]
fn classes(x: uint8x16_t) -> (u64, u64) {
    let digit = vcleq_u8(vsubq_u8(x, vdupq_n_u8(b'0')), vdupq_n_u8(9));
    let letter = vcleq_u8(
        vsubq_u8(vorrq_u8(x, vdupq_n_u8(0x20)), vdupq_n_u8(b'a')),
        vdupq_n_u8(5),
    );
    let colon = vceqq_u8(x, vdupq_n_u8(b':'));
    (bits(vorrq_u8(digit, letter)), bits(colon))
}

/// Byte `i` of a window: its hex digit value, or 0xF0 and up for a colon.
#[inline]
#[target_feature(enable = "neon")]
fn values(x: uint8x16_t) -> uint8x16_t {
    let low = vandq_u8(x, vdupq_n_u8(0x0F));
    // Letters (bit 6 set) have 1-6 in the low nibble and gain 9.
    let letter = vtstq_u8(x, vdupq_n_u8(0x40));
    let colon = vceqq_u8(x, vdupq_n_u8(b':'));
    let v = vaddq_u8(low, vandq_u8(letter, vdupq_n_u8(9)));
    vorrq_u8(v, vandq_u8(colon, vdupq_n_u8(0xF0)))
}

/// # Safety
/// The CPU has NEON; `s` has 16 to 39 bytes.
#[target_feature(enable = "neon")]
unsafe fn ipv6_neon(s: &[u8]) -> Option<u128> {
    let len = s.len();
    let starts = form::window_starts(len);
    let load = |at: usize| {
        // SAFETY: `at + 16 <= len` for each window start.
        unsafe { vld1q_u8(s.as_ptr().add(at)) }
    };
    // Written out: `array::map` with these closures was left a call (40 ns a parse, not 20).
    let windows = [
        (load(starts[0]), starts[0]),
        (load(starts[1]), starts[1]),
        (load(starts[2]), starts[2]),
    ];
    let masks = [
        classes(windows[0].0),
        classes(windows[1].0),
        classes(windows[2].0),
    ];
    let form = Form::of_windows(masks, starts, len)?;
    let ends = vcreate_u8(form.slot_ends());
    let ends = vcombine_u8(ends, ends);
    let values = windows.map(|(w, at)| (values(w), at as u8));
    const OFFSETS: [u8; 16] = [
        253, 254, 255, 0, 253, 254, 255, 0, 253, 254, 255, 0, 253, 254, 255, 0,
    ];
    // SAFETY: the load reads the 16 bytes of `OFFSETS`.
    let offsets = unsafe { vld1q_u8(OFFSETS.as_ptr()) };
    let half = |spread: [u8; 16]| {
        // SAFETY: the load reads the 16 bytes of `spread`.
        let spread = unsafe { vld1q_u8(spread.as_ptr()) };
        // Slot byte 4g + j holds the text position of group g's last digit, minus 3 - j.
        let index = vaddq_u8(vqtbl1q_u8(ends, spread), offsets);
        let mut v = vdupq_n_u8(0);
        for &(w, at) in &values {
            // An index of 16 and up (positions outside the window) gives 0.
            v = vorrq_u8(v, vqtbl1q_u8(w, vsubq_u8(index, vdupq_n_u8(at))));
        }
        // A slot at or before a colon in its group's 4 bytes is a leading zero.
        let colon = vreinterpretq_u32_u8(vtstq_u8(v, vdupq_n_u8(0x80)));
        let colon = vorrq_u32(colon, vshrq_n_u32(colon, 8));
        let colon = vorrq_u32(colon, vshrq_n_u32(colon, 16));
        vbicq_u8(v, vreinterpretq_u8_u32(colon))
    };
    let first = half([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]);
    let second = half([4, 4, 4, 4, 5, 5, 5, 5, 6, 6, 6, 6, 7, 7, 7, 7]);
    // Two digits a byte: 16 * first + second.
    let bytes = vorrq_u8(
        vshlq_n_u8(vuzp1q_u8(first, second), 4),
        vuzp2q_u8(first, second),
    );
    let mut out = [0u8; 16];
    // SAFETY: `out` has 16 bytes.
    unsafe { vst1q_u8(out.as_mut_ptr(), bytes) };
    Some(u128::from_be_bytes(out))
}
