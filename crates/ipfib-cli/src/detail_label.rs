//! The labels of engine details ([`ipfib::engine::Detail`]) in `ipfib stats`'s text report.
//! A detail's name is a `snake_case` JSON key; its label is the name with spaces (a name
//! that does not say what its figure is gets a label of its own here; none does today).

/// The text label of the detail named `name`.
pub fn of(name: &str) -> String {
    name.replace('_', " ")
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_become_labels() {
        assert_eq!(super::of("direct_bytes"), "direct bytes");
    }
}
