//! Why the kernel's BPF LPM trie could not be used or answered.

/// An error from loading, filling or running the BPF LPM trie.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BpfError {
    /// This build has no BPF support (built without the `bpf` feature).
    #[error("built without the `bpf` feature (clang and libbpf: scripts/install-bpf.sh)")]
    NotBuilt,
    /// The kernel refused a step (no root or CAP_BPF, BPF disabled, a verifier rejection).
    #[error("the kernel refused {step}: {reason} (BPF needs root or CAP_BPF and CAP_PERFMON; IPFIB_BPF_DEBUG=1 prints libbpf's log)")]
    Kernel {
        /// What was being done.
        step: String,
        /// The kernel's or libbpf's explanation.
        reason: String,
    },
    /// More keys than the maps were sized for.
    #[error("{what}: {needed} entries do not fit the {capacity} the maps were created with")]
    Capacity {
        /// What did not fit.
        what: &'static str,
        /// Entries needed.
        needed: usize,
        /// Entries available.
        capacity: usize,
    },
    /// A map operation failed in the BPF program (an insert of an existing prefix, a delete
    /// of an absent one, the trie full).
    #[error("{op} of slot {slot} failed in the BPF program: errno {errno}")]
    Operation {
        /// The operation.
        op: &'static str,
        /// The slot it failed on.
        slot: u64,
        /// The (positive) errno the helper returned.
        errno: i64,
    },
    /// The free probe saw no trie freed within the time allowed.
    #[error("no LPM trie free was seen within {0} s (trie_free was not called, or another probe is attached)")]
    FreeNotSeen(u64),
}
