//! The bench's conclusion, one line per table, mode, path and thread count: which engine won,
//! by how much over the runner-up and over the best peer (a comparator that is not ipfib's:
//! the peer crates `prefix-trie` and `ip_network_table`, or DPDK's with feature `dpdk`), and
//! on which CPU. Printed after the table; the JSON carries the same figures in every row
//! (`summary`, the same object for all rows of one group).

use serde::Serialize;

use crate::bench::modes::{Mode, Path as LookupPath};
use crate::bench::report::Row;

/// The conclusion of one group of rows (same table, mode, path and threads). Field names are
/// the JSON's; ratios are the winner's M lookups/s over the other's.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Summary {
    /// The mode of the group.
    pub mode: Mode,
    /// The path of the group.
    pub path: LookupPath,
    /// The thread count of the group.
    pub threads: usize,
    /// The fastest engine (highest median M lookups/s; the first listed on a tie).
    pub winner: String,
    /// Whether the winner is one of ipfib's engines.
    pub winner_ours: bool,
    /// The winner's median M lookups/s.
    pub winner_mlps: f64,
    /// The second fastest engine; `null` when only one was measured.
    pub runner_up: Option<String>,
    /// Winner over runner-up (at least 1).
    pub vs_runner_up: Option<f64>,
    /// The fastest peer other than the winner; `null` when none was measured.
    pub best_peer: Option<String>,
    /// Winner over that peer.
    pub vs_best_peer: Option<f64>,
    /// The fastest of ipfib's engines (the winner itself when it is ours); `null` when none
    /// was measured.
    pub best_ours: Option<String>,
    /// Winner over ipfib's fastest (1 when the winner is ours).
    pub vs_best_ours: Option<f64>,
    /// The CPU's model name (`/proc/cpuinfo`).
    pub cpu_model: String,
    /// The CPUs the winner's lookups were seen running on.
    pub cpus_used: Vec<usize>,
}

/// Whether two rows belong to one group.
fn same_group(a: &Row, b: &Row) -> bool {
    a.table.table == b.table.table
        && a.table.prefixes == b.table.prefixes
        && a.mode == b.mode
        && a.path == b.path
        && a.threads == b.threads
}

/// The fastest of `rows` that `keep` accepts (the first on a tie).
fn fastest<'a>(rows: &[&'a Row], keep: impl Fn(&Row) -> bool) -> Option<&'a Row> {
    rows.iter()
        .copied()
        .filter(|r| keep(r))
        .fold(None, |best: Option<&Row>, r| match best {
            Some(b) if b.mlps >= r.mlps => Some(b),
            _ => Some(r),
        })
}

/// The conclusion of one non-empty group.
fn conclude(group: &[&Row], cpu_model: &str) -> Option<Summary> {
    let winner = fastest(group, |_| true)?;
    let is_winner = |r: &Row| std::ptr::eq(r, winner);
    let ratio = |other: Option<&Row>| other.map(|o| winner.mlps / o.mlps);
    let runner_up = fastest(group, |r| !is_winner(r));
    let best_peer = fastest(group, |r| !r.ours && !is_winner(r));
    let best_ours = fastest(group, |r| r.ours);
    Some(Summary {
        mode: winner.mode,
        path: winner.path,
        threads: winner.threads,
        winner: winner.engine.clone(),
        winner_ours: winner.ours,
        winner_mlps: winner.mlps,
        runner_up: runner_up.map(|r| r.engine.clone()),
        vs_runner_up: ratio(runner_up),
        best_peer: best_peer.map(|r| r.engine.clone()),
        vs_best_peer: ratio(best_peer),
        best_ours: best_ours.map(|r| r.engine.clone()),
        vs_best_ours: ratio(best_ours),
        cpu_model: cpu_model.to_string(),
        cpus_used: winner.cpus_used.clone(),
    })
}

/// Sets every row's `summary` to its group's conclusion.
pub fn attach(rows: &mut [Row], cpu_model: &str) {
    let summaries: Vec<Option<Summary>> = rows
        .iter()
        .map(|r| {
            let group: Vec<&Row> = rows.iter().filter(|o| same_group(r, o)).collect();
            conclude(&group, cpu_model)
        })
        .collect();
    for (row, summary) in rows.iter_mut().zip(summaries) {
        row.summary = summary;
    }
}

/// `1.42x`, or `-` for a ratio that is not a finite number (a run too short to time).
fn times(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}x")
    } else {
        "-".into()
    }
}

/// The summary line: it starts with the winner's name, like the table's rows, e.g.
/// `planb wins throughput batch x1 at 312.40 M lookups/s: 1.42x the runner-up poptrie, 5.10x
/// the best peer prefix-trie; CPU: AMD EPYC 7B13 (lookups on CPU 1)`.
pub fn line(s: &Summary) -> String {
    let peer = if s.winner_ours { "" } else { " (a peer)" };
    let mut parts = Vec::new();
    match (&s.runner_up, s.vs_runner_up) {
        (Some(r), Some(x)) => parts.push(format!("{} the runner-up {r}", times(x))),
        _ => parts.push("no other engine measured".into()),
    }
    match (&s.best_peer, s.vs_best_peer) {
        (Some(p), Some(_)) if s.runner_up.as_ref() == Some(p) => {
            parts.push(format!("{p} is also the best peer"));
        }
        (Some(p), Some(x)) => parts.push(format!("{} the best peer {p}", times(x))),
        _ => parts.push("no peer measured".into()),
    }
    if !s.winner_ours {
        match (&s.best_ours, s.vs_best_ours) {
            (Some(o), Some(x)) => parts.push(format!("{} ipfib's best {o}", times(x))),
            _ => parts.push("no ipfib engine measured".into()),
        }
    }
    let on = match s.cpus_used.as_slice() {
        [] => String::new(),
        [one] => format!(" (lookups on CPU {one})"),
        many => format!(
            " (lookups on CPUs {})",
            crate::bench::cpu::format_list(many)
        ),
    };
    format!(
        "{}{peer} wins {} {} x{} at {:.2} M lookups/s: {}; CPU: {}{on}",
        s.winner,
        s.mode.name(),
        s.path.name(),
        s.threads,
        s.winner_mlps,
        parts.join(", "),
        s.cpu_model
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn summary(winner: &str, ours: bool) -> Summary {
        Summary {
            mode: Mode::Throughput,
            path: LookupPath::Batch,
            threads: 1,
            winner: winner.into(),
            winner_ours: ours,
            winner_mlps: 300.0,
            runner_up: Some("poptrie".into()),
            vs_runner_up: Some(1.5),
            best_peer: Some("prefix-trie".into()),
            vs_best_peer: Some(6.0),
            best_ours: Some(if ours { winner } else { "planb" }.into()),
            vs_best_ours: Some(if ours { 1.0 } else { 1.2 }),
            cpu_model: "AMD EPYC".into(),
            cpus_used: vec![1],
        }
    }

    #[test]
    fn the_line_names_winner_ratios_and_cpu() {
        assert_eq!(
            line(&summary("planb", true)),
            "planb wins throughput batch x1 at 300.00 M lookups/s: 1.50x the runner-up \
             poptrie, 6.00x the best peer prefix-trie; CPU: AMD EPYC (lookups on CPU 1)"
        );
        let peer = line(&summary("ip_network_table", false));
        assert!(
            peer.starts_with("ip_network_table (a peer) wins")
                && peer.contains("1.20x ipfib's best planb"),
            "{peer}"
        );
        let mut alone = summary("planb", true);
        (alone.runner_up, alone.vs_runner_up) = (None, None);
        (alone.best_peer, alone.vs_best_peer) = (None, None);
        alone.cpus_used.clear();
        assert_eq!(
            line(&alone),
            "planb wins throughput batch x1 at 300.00 M lookups/s: no other engine measured, \
             no peer measured; CPU: AMD EPYC"
        );
    }
}
