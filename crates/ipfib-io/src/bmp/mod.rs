//! A BMP station (RFC 7854): routers stream their peers' routes to it, and it keeps a
//! [`ipfib::LiveFib`] equal to what the replay rules make of them.
//!
//! # Semantics
//!
//! * **View** ([`View`]): pre-policy Adj-RIB-In (peer types 0 to 2, L and O flags clear, the
//!   default), post-policy (L set), or the Loc-RIB (peer type 3). Route monitoring of the
//!   other views, Adj-RIB-Out and route mirroring are counted as ignored, by reason. Only
//!   unicast prefixes are used, as in replay.
//! * **Source of a route**: (peer address, router address, peer distinguisher), where the
//!   router is the TCP source address of its BMP session. The table holds, per prefix, the
//!   route of the lowest source in that order: the lowest peer address wins (IPv4 before
//!   IPv6), ties between routers reporting the same peer go to the lowest router address,
//!   then distinguisher. `peer` in [`StationConfig`] keeps only one peer's routes (merged
//!   across routers the same way). These are the rules of `ipfib replay --peer all`
//!   ([`crate::replay::rules`]), which also numbers the next hops: BGP next-hop addresses
//!   1, 2, ... by first appearance.
//! * **ADD-PATH**: for a family where the Peer Up OPENs negotiated it, every path is kept and
//!   the peer's route is the path with the lowest path identifier.
//! * **Peer Up** starts the peer with no routes (a Peer Up for a peer that is up drops its old
//!   routes first). Route monitoring for a peer without a Peer Up (GoBGP 3.10 sends Loc-RIB
//!   routes so) starts it too, with a notice. **Peer Down** withdraws all the peer's routes in
//!   one batch.
//! * **Session end** (end of stream, read error, Termination, or a bad message): with no hold
//!   time all the router's routes go in one batch. With a hold time they stay, ranked after
//!   any live route of the same peer and router; when the router reconnects, each peer's
//!   End-of-RIB for a family withdraws that family's held routes of the peer, and at the
//!   deadline whatever is still held goes.
//! * **End-of-RIB** is reported per peer and family, and is never required (GoBGP sends none
//!   when the BMP session was up before the BGP session).
//!
//! # Bad input
//!
//! A session is read and checked one whole message at a time in its own thread; a message
//! that fails any check ([`Problem`]: framing, an absurd length, a malformed UPDATE, a
//! prefix with host bits, a family the engine cannot hold, a limit) closes the session with
//! an error naming the router, the byte offset, the message type and the problem, and
//! nothing of that message reaches the table. Then the session-end rule applies.

mod error;
mod frame;
mod header;
mod listen;
mod open;
mod session;
mod station;

pub use error::{BmpError, Problem};
pub use frame::{kind, Frame, FrameError, Framer, COMMON_HEADER, MAX_MESSAGE, PER_PEER_HEADER};
pub use header::{PeerHeader, View};
pub use listen::{follow, FollowError, ListenConfig, Observed, TICK};
pub use open::AddPath;
pub use session::{Families, Family, Message, PeerId, Session};
pub use station::{Event, Notice, Outcome, PeerState, RouterState, Station, StationConfig};
