//! Structural measurements of a table, used to compare generated tables with real ones.

use ipfib::Address;
use ipfib::RouteTable;

/// Number of routes at each nesting depth: index `d` counts the routes covered by exactly `d`
/// other routes of the table (0 = top-level). Empty for an empty table.
///
/// One sweep in (address, length) order with a stack of the prefixes containing the current
/// one, so it costs O(routes).
pub fn depth_histogram<A: Address>(table: &RouteTable<A>) -> Vec<usize> {
    let mut histogram: Vec<usize> = Vec::new();
    let mut open: Vec<A> = Vec::with_capacity(usize::from(A::BITS) + 1);
    for (prefix, _) in table.iter() {
        while open.last().is_some_and(|&last| last < prefix.first()) {
            open.pop();
        }
        let depth = open.len();
        if histogram.len() <= depth {
            histogram.resize(depth + 1, 0);
        }
        histogram[depth] += 1;
        open.push(prefix.last());
    }
    histogram
}

/// The share of routes that some other route of the table covers (0 for an empty table).
pub fn nested_share<A: Address>(table: &RouteTable<A>) -> f64 {
    let histogram = depth_histogram(table);
    let total: usize = histogram.iter().sum();
    if total == 0 {
        return 0.0;
    }
    (total - histogram[0]) as f64 / total as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use ipfib::Prefix;

    fn table(routes: &[&str]) -> RouteTable<u32> {
        routes
            .iter()
            .map(|s| (Prefix::from_net(s.parse().unwrap()).unwrap(), 1))
            .collect()
    }

    #[test]
    fn depths_of_a_small_forest() {
        let t = table(&[
            "10.0.0.0/8",
            "10.1.0.0/16",
            "10.1.2.0/24",
            "10.2.0.0/16",
            "11.0.0.0/24",
            "11.0.1.0/24",
        ]);
        assert_eq!(depth_histogram(&t), [3, 2, 1]);
        assert!((nested_share(&t) - 0.5).abs() < 1e-12);
    }

    #[test]
    fn a_prefix_ending_at_the_top_and_the_default_route() {
        let t = table(&["0.0.0.0/0", "255.255.255.255/32", "255.0.0.0/8"]);
        assert_eq!(depth_histogram(&t), [1, 1, 1]);
    }

    #[test]
    fn empty_table() {
        assert!(depth_histogram(&RouteTable::<u128>::new()).is_empty());
        assert_eq!(nested_share(&RouteTable::<u128>::new()), 0.0);
    }
}
