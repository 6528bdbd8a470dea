//! CP-Trie (Islam & Khan, IEEE HPSR 2021): Poptrie's popcount trie with wide nodes. A node of
//! stride `k` keeps its slot bitmaps in 64-bit chunks, each beside the cumulative count of
//! children and leaves before it, so a step reads one chunk and counts one 64-bit word
//! whatever `k` is: 8–16 bits per node, where Poptrie is held to 6 by one `popcnt`.
//!
//! A lookup reads `direct[top s bits]`; if the block has one answer that is it, else it walks
//! `k` bits per node until a slot is a leaf (`layout` says what each array holds). Built from
//! the merged intervals (`build`), like our Poptrie: exact for every prefix length (the last
//! level of a key is partial; padding slots repeat the reachable answer), independent of
//! insertion order, and a node exists only where answers differ below it.
//!
//! Modules: `layout` (arrays and bit extraction), `build` (route table → arrays), `lookup`
//! (single and batched walks), `lines` (the cache-line model), `validate` (invariants).

mod build;
mod layout;
mod lines;
mod lookup;
mod validate;

#[cfg(test)]
mod tests;

use std::marker::PhantomData;

use crate::cpu::Cpu;
use crate::engine::{check_batch, Build, BuildOptions, Detail, Lookup};
use crate::error::{BuildError, InvalidStructure, LookupError};
use crate::route_table::{NextHop, RouteTable};
use layout::{Chunk, Leaves};
pub use layout::{Family, MAX_STRIDE, MIN_STRIDE};
use lookup::{View, Walk};

/// Direct-table width for IPv4.
pub const DIRECT_BITS_V4: u32 = 16;
/// Node stride for IPv4.
pub const STRIDE_V4: u32 = 8;
/// Direct-table width for IPv6.
pub const DIRECT_BITS_V6: u32 = 16;
/// Node stride for IPv6.
pub const STRIDE_V6: u32 = 8;

/// The widest direct table allowed (2^24 entries).
pub const MAX_DIRECT_BITS: u32 = 24;

/// The CP-Trie lookup structure for one family.
///
/// ```
/// use ipfib::engine::{cptrie::CpTrie, Build, BuildOptions, Lookup};
/// use ipfib::{Prefix, RouteTable};
///
/// let routes: RouteTable<u32> = [
///     (Prefix::new(0x0a00_0000, 8).unwrap(), 1),
///     (Prefix::new(0x0a01_0200, 24).unwrap(), 2),
/// ]
/// .into_iter()
/// .collect();
/// let fib = CpTrie::build(&routes, &BuildOptions::default()).unwrap();
/// assert_eq!(fib.lookup(0x0a01_0203), Some(2));
/// assert_eq!(fib.lookup(0x0a02_0000), Some(1));
/// assert_eq!(fib.lookup(0x0b00_0000), None);
/// ```
#[derive(Clone, Debug)]
pub struct CpTrie<A: Family> {
    /// Direct-table width `s`.
    bits: u32,
    /// Node stride `k`.
    stride: u32,
    direct: Box<[u32]>,
    chunks: Box<[Chunk]>,
    /// Never empty (a batch may read leaf 0 without using it).
    leaves: Leaves,
    /// `hops[0]` is "no route".
    hops: Box<[NextHop]>,
    /// Nodes per level below the direct table.
    levels: Vec<usize>,
    cpu: Cpu,
    family: PhantomData<A>,
}

impl<A: Family> CpTrie<A> {
    /// Builds with a direct table of `2^direct_bits` entries (`1..=24`, at most the address
    /// width) and nodes of `stride` bits (`6..=16`).
    pub fn build_with(
        table: &RouteTable<A>,
        options: &BuildOptions,
        direct_bits: u32,
        stride: u32,
    ) -> Result<Self, BuildError> {
        let backend = options.resolve_backend()?;
        let cpu = Cpu::new(backend).ok_or(BuildError::BackendUnavailable {
            backend: backend.name(),
        })?;
        let max = MAX_DIRECT_BITS.min(u32::from(A::BITS));
        if direct_bits == 0 || direct_bits > max || !(MIN_STRIDE..=MAX_STRIDE).contains(&stride) {
            return Err(BuildError::Unsupported {
                engine: "cptrie",
                reason: format!(
                    "direct table of {direct_bits} bits (1 to {max}) and stride {stride} \
                     ({MIN_STRIDE} to {MAX_STRIDE})"
                ),
            });
        }
        let built = build::build(table, direct_bits, stride)?;
        let mut leaves = built.leaves;
        if leaves.is_empty() {
            leaves.push(0);
        }
        let leaves = if built.hops.len() <= 1 << 16 {
            Leaves::Narrow(leaves.iter().map(|&l| l as u16).collect())
        } else {
            Leaves::Wide(leaves.into_boxed_slice())
        };
        let trie = CpTrie {
            bits: direct_bits,
            stride,
            direct: built.direct.into_boxed_slice(),
            chunks: built.chunks.into_boxed_slice(),
            leaves,
            hops: built.hops.into_boxed_slice(),
            levels: built.levels,
            cpu,
            family: PhantomData,
        };
        #[cfg(debug_assertions)]
        if let Err(e) = validate::check(&trie) {
            panic!("the builder made an invalid structure: {e}");
        }
        Ok(trie)
    }

    /// Direct-table width `s`.
    pub fn direct_bits(&self) -> u32 {
        self.bits
    }

    /// Node stride `k`.
    pub fn stride(&self) -> u32 {
        self.stride
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.levels.iter().sum()
    }

    /// Nodes per level below the direct table.
    pub fn levels(&self) -> &[usize] {
        &self.levels
    }

    #[inline(always)]
    fn view<'t, L>(&'t self, leaves: &'t [L]) -> View<'t, L> {
        View {
            bits: self.bits,
            stride: self.stride,
            direct: &self.direct,
            chunks: &self.chunks,
            leaves,
            hops: &self.hops,
        }
    }

    fn batch_into<O: lookup::Output>(&self, addrs: &[A], out: &mut [O], miss: NextHop) {
        // SAFETY: the token proves the CPU features its walk enables, and every `CpTrie`
        // satisfies the invariants the walks rely on (the builder makes only such ones).
        crate::cpu::with_token!(self.cpu, c => unsafe {
            match &self.leaves {
                Leaves::Narrow(l) => c.run_batch(self.view(l), addrs, out, miss),
                Leaves::Wide(l) => c.run_batch(self.view(l), addrs, out, miss),
            }
        })
    }

    fn bytes_of_parts(&self) -> [(&'static str, usize); 4] {
        [
            ("direct_bytes", std::mem::size_of_val(&*self.direct)),
            ("node_bytes", std::mem::size_of_val(&*self.chunks)),
            ("leaf_bytes", self.leaves.bytes()),
            ("next_hop_bytes", std::mem::size_of_val(&*self.hops)),
        ]
    }
}

impl<A: Family> Build<A> for CpTrie<A> {
    /// An empty table gets a 2-entry direct table (a dual-stack `Fib` of one family would
    /// otherwise carry 256 KiB of "no route" for the other).
    fn build(table: &RouteTable<A>, options: &BuildOptions) -> Result<Self, BuildError> {
        let (bits, stride) = if A::BITS == 32 {
            (DIRECT_BITS_V4, STRIDE_V4)
        } else {
            (DIRECT_BITS_V6, STRIDE_V6)
        };
        Self::build_with(
            table,
            options,
            if table.is_empty() { 1 } else { bits },
            stride,
        )
    }
}

impl<A: Family> Lookup<A> for CpTrie<A> {
    fn name(&self) -> &'static str {
        "cptrie"
    }

    fn lookup(&self, addr: A) -> Option<NextHop> {
        // SAFETY: as for the batch.
        crate::cpu::with_token!(self.cpu, c => unsafe {
            match &self.leaves {
                Leaves::Narrow(l) => c.run_answer(self.view(l), addr),
                Leaves::Wide(l) => c.run_answer(self.view(l), addr),
            }
        })
    }

    fn lookup_batch(&self, addrs: &[A], out: &mut [Option<NextHop>]) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        self.batch_into(addrs, out, 0);
        Ok(())
    }

    fn lookup_batch_raw(
        &self,
        addrs: &[A],
        out: &mut [NextHop],
        miss: NextHop,
    ) -> Result<(), LookupError> {
        check_batch(addrs.len(), out.len())?;
        self.batch_into(addrs, out, miss);
        Ok(())
    }

    fn memory_bytes(&self) -> usize {
        self.bytes_of_parts().iter().map(|(_, b)| b).sum()
    }

    fn describe(&self) -> Vec<Detail> {
        let levels: Vec<String> = self.levels.iter().map(|n| n.to_string()).collect();
        let mut details = vec![
            Detail::count("direct_bits", self.bits as usize),
            Detail::count("stride", self.stride as usize),
            Detail::count("levels", self.levels.len() + 1),
            Detail::text(
                "nodes_per_level",
                if levels.is_empty() {
                    "-".to_string()
                } else {
                    levels.join("/")
                },
            ),
            Detail::count("nodes", self.node_count()),
            Detail::count("chunks", self.chunks.len()),
            Detail::count("leaves", self.leaves.len()),
            Detail::count(
                "direct_leaves",
                self.direct
                    .iter()
                    .filter(|&&d| d & layout::LEAF_TAG != 0)
                    .count(),
            ),
            Detail::count("next_hops", self.hops.len() - 1),
            Detail::text(
                "walk",
                crate::cpu::with_token!(self.cpu, c => lookup::Access::name(c)),
            ),
            Detail::text("batch_walk", "interleaved groups"),
        ];
        details.extend(
            self.bytes_of_parts()
                .into_iter()
                .map(|(name, b)| Detail::bytes(name, b)),
        );
        details
    }

    fn lines_per_lookup(&self, addrs: &[A]) -> Option<f64> {
        crate::engine::line_model::mean(addrs, |a| self.lines_touched(a))
    }

    fn validate(&self) -> Result<(), InvalidStructure> {
        validate::check(self)
    }
}
