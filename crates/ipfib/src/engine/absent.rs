//! The stand-in for a family an engine does not support.

use super::{Build, BuildOptions, Lookup};
use crate::addr::Address;
use crate::error::BuildError;
use crate::route_table::{NextHop, RouteTable};

/// What a single-family engine registers for the other family: it builds from an empty table
/// (and then answers "no route" for every address, which is exact) and refuses any route with
/// [`BuildError::UnsupportedFamily`], so a table is never silently cut in half.
#[derive(Clone, Copy, Debug, Default)]
pub struct Absent;

impl<A: Address> Lookup<A> for Absent {
    fn name(&self) -> &'static str {
        "absent"
    }

    fn lookup(&self, _addr: A) -> Option<NextHop> {
        None
    }

    fn memory_bytes(&self) -> usize {
        0
    }
}

impl<A: Address> Build<A> for Absent {
    fn build(table: &RouteTable<A>, _options: &BuildOptions) -> Result<Self, BuildError> {
        if table.is_empty() {
            Ok(Absent)
        } else {
            Err(BuildError::UnsupportedFamily {
                engine: "absent",
                family: A::FAMILY,
            })
        }
    }
}
