//! Compiles `csrc/shim.c` against DPDK and links DPDK, only with the `dpdk` feature.
//!
//! Without the feature nothing is compiled or linked, so the workspace builds on machines that
//! have no DPDK. With it, `pkg-config libdpdk` supplies the link flags (through the
//! `pkg-config` crate) and the compile flags (DPDK's `.pc` file carries `-include rte_config.h`
//! and `-march=...`, which the crate does not expose, so those come from the `pkg-config`
//! program directly).

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "dpdk")]
    dpdk::build();
}

#[cfg(feature = "dpdk")]
mod dpdk {
    use std::process::Command;

    const HINT: &str =
        "install DPDK with scripts/install-dpdk.sh (Debian: libdpdk-dev, pkg-config)";

    pub fn build() {
        println!("cargo:rerun-if-changed=csrc/shim.c");
        println!("cargo:rerun-if-env-changed=PKG_CONFIG_PATH");
        let lib = match pkg_config::Config::new()
            .atleast_version("21.11")
            .probe("libdpdk")
        {
            Ok(lib) => lib,
            Err(e) => panic!("the `dpdk` feature needs libdpdk: {e}\n{HINT}"),
        };

        let pkg_config = std::env::var("PKG_CONFIG").unwrap_or_else(|_| "pkg-config".into());
        let out = Command::new(&pkg_config)
            .args(["--cflags", "libdpdk"])
            .output()
            .unwrap_or_else(|e| panic!("running {pkg_config}: {e}\n{HINT}"));
        assert!(
            out.status.success(),
            "{pkg_config} --cflags libdpdk failed: {}\n{HINT}",
            String::from_utf8_lossy(&out.stderr)
        );
        let cflags = String::from_utf8(out.stdout).expect("pkg-config output is UTF-8");

        let mut build = cc::Build::new();
        build.file("csrc/shim.c").warnings(true).opt_level(2);
        for path in &lib.include_paths {
            build.include(path);
        }
        // `-include rte_config.h` is two words; everything else is one flag per word.
        let mut words = cflags.split_whitespace();
        while let Some(word) = words.next() {
            if word == "-include" {
                if let Some(file) = words.next() {
                    build.flag("-include").flag(file);
                }
            } else if !word.starts_with("-I") {
                build.flag(word);
            }
        }
        build.compile("ipfib_dpdk_shim");
    }
}
