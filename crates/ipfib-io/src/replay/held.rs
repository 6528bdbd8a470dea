//! The routes one prefix holds under the merged rules: (source number, next hop) pairs in
//! preference order, the single-source case (almost every prefix of a BGP feed) inline with
//! no allocation of its own.

use ipfib::NextHop;

/// A source's number in [`super::rules::FibRules`] (its index among the keys seen).
pub(crate) type SourceId = u32;

/// The number of the base table's route, which ranks after every real source.
pub(crate) const BASE: SourceId = u32::MAX;

/// The routes of one prefix, never empty.
pub(crate) enum Held {
    One([(SourceId, NextHop); 1]),
    Many(Box<[(SourceId, NextHop)]>),
}

impl Held {
    /// `None` for no routes.
    pub(crate) fn from_vec(v: Vec<(SourceId, NextHop)>) -> Option<Held> {
        match v.len() {
            0 => None,
            1 => Some(Held::One([v[0]])),
            _ => Some(Held::Many(v.into_boxed_slice())),
        }
    }

    pub(crate) fn as_slice(&self) -> &[(SourceId, NextHop)] {
        match self {
            Held::One(one) => one,
            Held::Many(many) => many,
        }
    }

    pub(crate) fn into_vec(self) -> Vec<(SourceId, NextHop)> {
        match self {
            Held::One(one) => one.to_vec(),
            Held::Many(many) => many.into_vec(),
        }
    }

    /// Whether `id` holds a route here.
    pub(crate) fn has(&self, id: SourceId) -> bool {
        self.as_slice().iter().any(|&(s, _)| s == id)
    }
}
