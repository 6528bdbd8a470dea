//! NEON node search (aarch64): four 128-bit unsigned compares per node, the lane masks
//! (all ones for a key below the query) subtracted into a counter, and one horizontal add.
//! Key slots past `KEYS` are cleared from the last compare with a constant lane mask, so the
//! count needs no popcount of a bit mask (NEON has no movemask).

use std::arch::aarch64::{
    uint16x8_t, uint32x4_t, vaddvq_u16, vaddvq_u32, vandq_u16, vandq_u32, vcltq_u16, vcltq_u32,
    vdupq_n_u16, vdupq_n_u32, vld1q_u16, vld1q_u32, vsubq_u16, vsubq_u32,
};

use super::Search;
use crate::engine::planb::line::{Line16, Line32};

pub use crate::cpu::Neon;

/// Lane indices of a 4 × `u32` and an 8 × `u16` vector.
const LANES32: [u32; 4] = [0, 1, 2, 3];
const LANES16: [u16; 8] = [0, 1, 2, 3, 4, 5, 6, 7];

impl Search for Neon {
    #[inline(always)]
    fn rank32<const KEYS: usize>(self, line: &Line32, x: u32) -> u32 {
        // SAFETY: a `Neon` exists only when the CPU has NEON; `line` is a reference to 16
        // `u32`s, and each load reads 4 of them at `4 q < 16`.
        unsafe {
            let q = vdupq_n_u32(x);
            let lanes = vld1q_u32(LANES32.as_ptr());
            let mut count: uint32x4_t = vdupq_n_u32(0);
            for quad in 0..4 {
                if 4 * quad >= KEYS {
                    break;
                }
                let keys = vld1q_u32(line.0.as_ptr().add(4 * quad));
                let mut less = vcltq_u32(keys, q);
                if 4 * quad + 4 > KEYS {
                    // Only lanes below `KEYS` count.
                    let limit = vdupq_n_u32((KEYS - 4 * quad) as u32);
                    less = vandq_u32(less, vcltq_u32(lanes, limit));
                }
                // A set lane is `u32::MAX`, minus one: subtracting counts it.
                count = vsubq_u32(count, less);
            }
            vaddvq_u32(count)
        }
    }

    #[inline(always)]
    fn rank16<const KEYS: usize>(self, line: &Line16, x: u16) -> u32 {
        // SAFETY: as above, for 32 `u16`s read 8 at a time at `8 q < 32`.
        unsafe {
            let q = vdupq_n_u16(x);
            let lanes = vld1q_u16(LANES16.as_ptr());
            let mut count: uint16x8_t = vdupq_n_u16(0);
            for oct in 0..4 {
                if 8 * oct >= KEYS {
                    break;
                }
                let keys = vld1q_u16(line.0.as_ptr().add(8 * oct));
                let mut less = vcltq_u16(keys, q);
                if 8 * oct + 8 > KEYS {
                    let limit = vdupq_n_u16((KEYS - 8 * oct) as u16);
                    less = vandq_u16(less, vcltq_u16(lanes, limit));
                }
                count = vsubq_u16(count, less);
            }
            u32::from(vaddvq_u16(count))
        }
    }

    shared_access!();
}
