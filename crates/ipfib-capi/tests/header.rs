//! The checked-in header is what cbindgen makes of the current source: CI fails when someone
//! changes the C interface without regenerating it (`IPFIB_WRITE_HEADER=1 cargo build -p
//! ipfib-capi`).

#[test]
fn header_is_fresh() {
    let generated = include_str!(concat!(env!("OUT_DIR"), "/ipfib.h"));
    let checked_in =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/include/ipfib.h"))
            .expect("include/ipfib.h is checked in");
    assert!(
        generated == checked_in,
        "include/ipfib.h is stale: regenerate it with IPFIB_WRITE_HEADER=1 cargo build -p ipfib-capi"
    );
}
