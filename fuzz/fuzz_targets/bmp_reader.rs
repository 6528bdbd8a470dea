//! The BMP station's reading path (framing, per-message decoding, the station) on arbitrary
//! bytes as one session: never a panic; errors name the router and stay short; the table
//! never holds more routes than the accepted messages announced; and a session that fails
//! (held for an hour, so nothing is withdrawn) leaves exactly the table of the messages
//! accepted before the bad one.

#![no_main]

use std::time::{Duration, Instant};

use ipfib::{Table, Update};
use ipfib_io::bmp::{Event, Families, Framer, Message, Session, Station, StationConfig, View};
use ipfib_io::UpdateKind;
use libfuzzer_sys::fuzz_target;

fn apply(table: &mut Table, updates: Vec<Update>) {
    for u in updates {
        match u {
            Update::Insert(n, nh) => {
                table.insert(n, nh).expect("the station sends canonical prefixes");
            }
            Update::Remove(n) => {
                table.remove(&n);
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let router = "127.0.0.2:4000".parse().unwrap();
    // The first byte picks the view and the families, the rest is the session.
    let Some((&pick, data)) = data.split_first() else {
        return;
    };
    let view = [View::PrePolicy, View::PostPolicy, View::LocRib][usize::from(pick % 3)];
    let families = Families {
        engine: "fuzz".into(),
        v4: pick & 0x10 == 0,
        v6: pick & 0x20 == 0,
    };
    let mut station = Station::new(StationConfig {
        hold: Duration::from_secs(3600),
        max_routes_per_peer: 1000,
        ..StationConfig::default()
    });
    let now = Instant::now();
    let mut table = Table::new();
    apply(&mut table, station.handle(Event::Opened { session: 1, router }, now).updates);
    let mut session = Session::new(router, view, families);
    let mut framer = Framer::new(data);
    let mut announced = 0usize;
    let error = loop {
        let frame = match framer.next_frame() {
            Ok(Some(f)) => f,
            Ok(None) => break None,
            Err(e) => break Some(*session.error(e.offset, e.kind, None, e.problem)),
        };
        let offset = frame.offset;
        let message = match session.decode(&frame) {
            Ok(m) => m,
            Err(e) => break Some(*e),
        };
        if let Message::Routes { changes, .. } = &message {
            announced += changes
                .iter()
                .filter(|(_, k)| matches!(k, UpdateKind::Announce { .. }))
                .count();
        }
        let o = station.handle(Event::Message { session: 1, message, offset }, now);
        apply(&mut table, o.updates);
        assert!(table.len() <= announced, "{} routes from {announced} announcements", table.len());
        if o.close.is_some() {
            return;
        }
    };
    if let Some(e) = &error {
        let text = e.to_string();
        assert!(text.starts_with("router 127.0.0.2:4000"), "{text}");
        assert!(text.len() <= 4000, "error message of {} bytes", text.len());
    }
    let before = table.clone();
    let o = station.handle(Event::Closed { session: 1, error }, now);
    apply(&mut table, o.updates);
    assert_eq!(table, before, "a held session's end changes nothing");
});
