//! With the `bpf` feature: compiles the two BPF programs (`bpf/*.bpf.c`) with clang for the
//! `bpf` target into `OUT_DIR` (the crate embeds the objects), and `csrc/shim.c` against
//! libbpf. Without it nothing is compiled, so the workspace builds where clang and libbpf are
//! missing.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    #[cfg(feature = "bpf")]
    bpf::build();
}

#[cfg(feature = "bpf")]
mod bpf {
    use std::path::PathBuf;
    use std::process::Command;

    const HINT: &str = "install clang and libbpf with scripts/install-bpf.sh (Debian: clang, libbpf-dev, pkg-config)";

    pub fn build() {
        println!("cargo:rerun-if-env-changed=CLANG");
        let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
        let clang = std::env::var("CLANG").unwrap_or_else(|_| "clang".into());
        // The UAPI headers (<linux/bpf.h>) sit under the multiarch directory on Debian.
        let multiarch = format!(
            "/usr/include/{}-linux-gnu",
            std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default()
        );
        for name in ["lpm_bench", "trie_free"] {
            let src = format!("bpf/{name}.bpf.c");
            println!("cargo:rerun-if-changed={src}");
            let obj = out.join(format!("{name}.bpf.o"));
            let status = Command::new(&clang)
                .args([
                    "-O2", "-g", "-Wall", "-target", "bpf", "-I", &multiarch, "-c", &src, "-o",
                ])
                .arg(&obj)
                .status()
                .unwrap_or_else(|e| panic!("running {clang}: {e}\n{HINT}"));
            assert!(status.success(), "{clang} failed on {src}\n{HINT}");
        }

        println!("cargo:rerun-if-changed=csrc/shim.c");
        let lib = pkg_config::Config::new()
            .atleast_version("0.7")
            .cargo_metadata(false)
            .probe("libbpf")
            .unwrap_or_else(|e| panic!("the `bpf` feature needs libbpf: {e}\n{HINT}"));
        let mut build = cc::Build::new();
        build.file("csrc/shim.c").warnings(true).opt_level(2);
        for path in &lib.include_paths {
            build.include(path);
        }
        build.compile("ipfib_bpf_shim");
        // libbpf after the shim that calls it, so that `--as-needed` keeps it.
        for path in &lib.link_paths {
            println!("cargo:rustc-link-search=native={}", path.display());
        }
        for name in &lib.libs {
            println!("cargo:rustc-link-lib={name}");
        }
    }
}
