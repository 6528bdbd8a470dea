//! The EAL's memory size comes from `IPFIB_DPDK_MEM_MB` when set, and a structure that does
//! not fit is a typed error. The EAL starts once per process, so each case runs this test
//! binary again as a child process with its own environment.
#![cfg(feature = "dpdk")]

use std::process::Command;

use ipfib::{Prefix, RouteTable};
use ipfib_dpdk::{DpdkError, DpdkFib6};

const CHILD: &str = "IPFIB_DPDK_TEST_CHILD";

/// Runs `child_case` in a fresh process with `IPFIB_DPDK_MEM_MB=mem`; returns its outcome
/// line (from `OUTCOME` on).
fn run_child(mem: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_case",
            "--nocapture",
            "--test-threads",
            "1",
        ])
        .env(CHILD, "1")
        .env("IPFIB_DPDK_MEM_MB", mem)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {stdout}\n{stderr}");
    let line = stdout
        .lines()
        .find_map(|l| l.find("OUTCOME").map(|i| l[i..].to_string()));
    line.unwrap_or_else(|| panic!("no outcome in the child's output: {stdout}\n{stderr}"))
}

/// Not a test on its own: in a child process, builds a small FIB and prints the outcome.
#[test]
fn child_case() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let table: RouteTable<u128> = [(Prefix::new(0, 0).unwrap(), 1)].into_iter().collect();
    match DpdkFib6::build(&table) {
        Ok(_) => {
            // The EAL runs already, so the size asked for here is ignored.
            let eal = ipfib_dpdk::init_eal(1).unwrap();
            println!("OUTCOME built total={}", eal.mem_mib)
        }
        Err(DpdkError::Memory {
            needed_mib,
            free_mib,
            total_mib,
            ..
        }) => {
            println!("OUTCOME memory needed={needed_mib} free={free_mib} total={total_mib}")
        }
        Err(DpdkError::Eal { reason, .. }) => println!("OUTCOME eal {reason}"),
        Err(e) => println!("OUTCOME other {e}"),
    }
}

#[test]
fn a_structure_larger_than_the_eal_memory_is_a_memory_error() {
    // rte_fib6's first-level table alone is 2^24 entries of 4 bytes: 64 MiB.
    let line = run_child("32");
    assert!(line.starts_with("OUTCOME memory needed="), "{line}");
    assert!(line.ends_with("total=32"), "{line}");
}

#[test]
fn the_memory_variable_sizes_the_eal() {
    assert_eq!(run_child("256"), "OUTCOME built total=256");
}

#[test]
fn a_malformed_memory_variable_is_an_eal_error() {
    let line = run_child("lots");
    assert!(
        line.contains("IPFIB_DPDK_MEM_MB must be a positive number"),
        "{line}"
    );
}
