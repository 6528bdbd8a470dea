//! The shape of plain IPv6 text (hex groups, at most one `::`) read from bit masks: what the
//! shuffle parsers (`ipv6_x86`, `ipv6_neon`) share around their instructions: where their
//! windows lie, the form check, and the text position each address slot's digits end at.

/// Where the three 16-byte windows that cover a text of 16 to 39 bytes start: at 0, at 16 (or
/// at `len - 16` when shorter than 32), and at `len - 16`; where they overlap they hold the
/// same bytes.
#[inline]
pub(super) fn window_starts(len: usize) -> [usize; 3] {
    let last = len - 16;
    [0, if len >= 32 { 16 } else { last }, last]
}

/// The shape of plain IPv6 text (hex groups, at most one `::`) read from its masks of hex
/// digits and colons (bit `i` for byte `i`), for the parsers that classify the whole text
/// at once.
pub(super) struct Form {
    /// The last digit of each group.
    lasts: u64,
    /// Groups written (8 without a `::`, fewer with one).
    groups: usize,
    /// Groups before the `::` (8 without one).
    before: usize,
}

impl Form {
    /// The form of a text of `len` bytes (16 to 39) from the (hex digits, colons) masks of
    /// its windows at `starts` ([`window_starts`]).
    #[inline]
    pub(super) fn of_windows(
        masks: [(u64, u64); 3],
        starts: [usize; 3],
        len: usize,
    ) -> Option<Form> {
        let (mut digits, mut colons) = (0u64, 0u64);
        for ((d, c), at) in masks.into_iter().zip(starts) {
            digits |= d << at;
            colons |= c << at;
        }
        Form::check(digits, colons, len)
    }

    /// The form of a `len`-byte text, if it is the plain one by the rules of
    /// `Ipv6Addr::from_str`: only hex digits and colons, 1 to 4 digits a group, and either 8
    /// groups or fewer with one `::` (which stands for at least one zero group).
    #[inline]
    fn check(digits: u64, colons: u64, len: usize) -> Option<Form> {
        if !(2..=39).contains(&len) {
            return None;
        }
        let last = len - 1;
        let double = colons & (colons >> 1); // the first colon of each `::`
        let firsts = digits & !(digits << 1);
        let groups = firsts.count_ones() as usize;
        // Every condition at once, without a branch each: a bit set in `bad` refuses.
        let bad = ((digits | colons) ^ ((1u64 << len) - 1))
            // a group of more than 4 digits
            | (digits & (digits >> 1) & (digits >> 2) & (digits >> 3) & (digits >> 4))
            // `:::`
            | (double & (double >> 1))
            // a colon at either end that is not half of a `::`
            | (colons & !double & 1)
            | ((colons >> last) & !(double >> (last - 1)) & 1);
        let valid = bad == 0
            && double & double.wrapping_sub(1) == 0 // at most one `::`
            && if double == 0 { groups == 8 } else { groups < 8 };
        valid.then(|| Form {
            lasts: digits & !(digits >> 1),
            groups,
            before: if double == 0 {
                8
            } else {
                (firsts & (double - 1)).count_ones() as usize
            },
        })
    }

    /// Each group's last digit (a text position) in the byte of its slot in the address, and
    /// 0xC0 (a position in no window, for every digit of the slot) in the slots of the `::`:
    /// what the shuffle parsers gather each slot's digits by.
    #[inline]
    pub(super) fn slot_ends(&self) -> u64 {
        let mut lasts = self.lasts;
        let mut ends = 0u64;
        for g in 0..8 {
            ends |= (u64::from(lasts.trailing_zeros()) & 0x3F) << (8 * g);
            lasts &= lasts.wrapping_sub(1);
        }
        if self.groups < 8 {
            // The groups after the `::` move up by the slots it stands for. A branch: without
            // one, text without `::` (most of it) ran 1-2 ns slower.
            let gap = 8 - self.groups;
            let keep = (1u64 << (8 * self.before)) - 1;
            let head = ends & keep;
            let tail = (ends & !keep & ((1u64 << (8 * self.groups)) - 1)) << (8 * gap);
            let zeros = (u64::MAX >> (64 - 8 * gap)) << (8 * self.before);
            ends = head | tail | (zeros & 0xC0C0_C0C0_C0C0_C0C0);
        }
        ends
    }
}
