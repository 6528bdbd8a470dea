//! The FIB text reader on arbitrary bytes: it must never panic, every error must be short (a
//! bad line is quoted as an excerpt, never whole), and whatever it accepts must survive a write
//! and a re-read unchanged.

#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let name = Path::new("fuzz.txt");
    match ipfib_io::text::read_fib_from(data, name) {
        Ok(table) => {
            let mut text = Vec::new();
            ipfib_io::text::write_fib(&mut text, &table).unwrap();
            let again = ipfib_io::text::read_fib_from(&text[..], name).unwrap();
            assert_eq!(again, table, "write + read changed the table");
            // A table from the text never has more routes than the input has lines.
            let line_ends = data.iter().filter(|&&b| b == b'\n' || b == b'\r').count();
            assert!(table.len() <= line_ends + 1);
        }
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.len() <= 400,
                "error message of {} bytes: {msg}",
                msg.len()
            );
        }
    }
    // Through the public entry point (format sniffing, decompression, the empty-table rule).
    let options = ipfib_io::LoadOptions {
        allow_empty: true,
        ..Default::default()
    };
    if let Err(e) = ipfib_io::load_fib_from(std::io::Cursor::new(data.to_vec()), name, &options) {
        let msg = e.to_string();
        assert!(
            msg.len() <= 600,
            "error message of {} bytes: {msg}",
            msg.len()
        );
    }
});
