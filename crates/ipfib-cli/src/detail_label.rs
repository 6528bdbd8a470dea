//! The labels of engine details ([`ipfib::engine::Detail`]) in `ipfib stats`'s text report.
//! A detail's name is a `snake_case` JSON key; its label is the name with spaces, unless the
//! name alone does not say what the figure is (the JSON keys stay as they are).

/// The text label of the detail named `name`.
pub fn of(name: &str) -> String {
    match name {
        // PlanB's map from each top-16-bit chunk to the segment that holds its tree (a live
        // table between compactions has several segments; with one the map is empty).
        "segment_of_bytes" => "chunk-to-segment map bytes".into(),
        other => other.replace('_', " "),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_become_labels() {
        assert_eq!(super::of("direct_bytes"), "direct bytes");
        assert_eq!(super::of("segment_of_bytes"), "chunk-to-segment map bytes");
    }
}
