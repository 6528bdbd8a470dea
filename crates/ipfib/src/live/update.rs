//! Route changes a [`super::LiveFib`] accepts, and their check on submission.

use ipnet::IpNet;

use crate::addr::Address;
use crate::error::LiveError;
use crate::prefix::Prefix;
use crate::route_table::NextHop;
use crate::table::Table;

/// One route change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Update {
    /// Add the route, or give an existing route this next hop (a BGP announcement).
    Insert(IpNet, NextHop),
    /// Remove the route if present (a BGP withdrawal); removing an absent route is no change.
    Remove(IpNet),
}

/// An accepted change, in the rebuilder's terms: checked, canonical, by family.
#[derive(Debug)]
pub(super) enum Op {
    Insert4(Prefix<u32>, NextHop),
    Insert6(Prefix<u128>, NextHop),
    Remove4(Prefix<u32>),
    Remove6(Prefix<u128>),
    /// The whole route set becomes this table.
    ReplaceAll(Box<Table>),
}

/// Which families the engine can hold routes of (IPv4, IPv6).
#[derive(Clone, Copy, Debug)]
pub(super) struct Families {
    pub engine: &'static str,
    pub v4: bool,
    pub v6: bool,
}

impl Families {
    fn check<A: Address>(&self, supported: bool, index: usize) -> Result<(), LiveError> {
        if supported {
            Ok(())
        } else {
            Err(LiveError::UnsupportedFamily {
                index,
                engine: self.engine,
                family: A::FAMILY,
            })
        }
    }

    /// Checks update `index` of a batch and turns it into an [`Op`]: a prefix with host bits
    /// set, or a route of a family the engine cannot hold, is refused here, before anything
    /// is queued. (Removing a route of an unsupported family is refused too: it cannot name a
    /// route the table has.)
    pub fn op(&self, update: Update, index: usize) -> Result<Op, LiveError> {
        let bad = |source| LiveError::InvalidPrefix { index, source };
        Ok(match update {
            Update::Insert(IpNet::V4(n), nh) => {
                self.check::<u32>(self.v4, index)?;
                Op::Insert4(Prefix::from_net(n).map_err(bad)?, nh)
            }
            Update::Insert(IpNet::V6(n), nh) => {
                self.check::<u128>(self.v6, index)?;
                Op::Insert6(Prefix::from_net(n).map_err(bad)?, nh)
            }
            Update::Remove(IpNet::V4(n)) => {
                self.check::<u32>(self.v4, index)?;
                Op::Remove4(Prefix::from_net(n).map_err(bad)?)
            }
            Update::Remove(IpNet::V6(n)) => {
                self.check::<u128>(self.v6, index)?;
                Op::Remove6(Prefix::from_net(n).map_err(bad)?)
            }
        })
    }

    /// Checks a whole replacement table.
    pub fn table(&self, table: Table) -> Result<Op, LiveError> {
        if !table.v4().is_empty() {
            self.check::<u32>(self.v4, 0)?;
        }
        if !table.v6().is_empty() {
            self.check::<u128>(self.v6, 0)?;
        }
        Ok(Op::ReplaceAll(Box::new(table)))
    }
}
