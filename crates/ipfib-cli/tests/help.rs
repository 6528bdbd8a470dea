//! The command-line definition as users meet it: `--help`, shell completions and manual pages,
//! all generated from the one clap definition, so every subcommand and engine appears.

mod common;

use common::ipfib;

/// Every subcommand, as a newcomer would look for it.
const SUBCOMMANDS: &[&str] = &[
    "lookup",
    "stats",
    "bench",
    "bench-ops",
    "convert",
    "replay",
    "save",
    "gen",
    "completions",
    "man",
];

fn engines() -> Vec<&'static str> {
    ipfib::engine::engines().iter().map(|e| e.name()).collect()
}

#[test]
fn top_level_help_lists_every_subcommand() {
    let out = ipfib(&["--help"], None);
    assert!(out.success, "{}", out.stderr);
    for name in SUBCOMMANDS {
        assert!(
            out.stdout.lines().any(|l| l.trim_start().starts_with(name)),
            "{name} missing:\n{}",
            out.stdout
        );
    }
}

#[test]
fn every_engine_option_lists_the_registered_engines() {
    for sub in ["lookup", "stats", "replay", "save"] {
        for flag in ["-h", "--help"] {
            let out = ipfib(&[sub, flag], None);
            assert!(out.success, "{sub}: {}", out.stderr);
            for e in engines() {
                assert!(
                    out.stdout.contains(e),
                    "{sub} {flag}: no {e}:\n{}",
                    out.stdout
                );
            }
            assert!(!out.stdout.contains("stats --help"), "{}", out.stdout);
        }
    }
    // bench --engines also names the peers of this build.
    let out = ipfib(&["bench", "--help"], None);
    for e in engines() {
        assert!(out.stdout.contains(e), "bench: no {e}");
    }
    if cfg!(feature = "peers") {
        assert!(out.stdout.contains("prefix-trie"), "{}", out.stdout);
    }
    // ... and explains its columns, `cpu` among them.
    assert!(
        out.stdout.contains("Columns of the table"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .lines()
            .any(|l| l.trim_start().starts_with("cpu ")),
        "{}",
        out.stdout
    );
}

#[test]
fn bash_completions_mention_every_subcommand_and_engine() {
    let out = ipfib(&["completions", "bash"], None);
    assert!(out.success, "{}", out.stderr);
    assert!(out.stdout.contains("complete "), "{}", out.stdout);
    for name in SUBCOMMANDS {
        assert!(out.stdout.contains(name), "{name} missing");
    }
    for e in engines() {
        assert!(out.stdout.contains(e), "{e} missing");
    }
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = ipfib(&["completions", shell], None);
        assert!(
            out.success && out.stdout.contains("bench"),
            "{shell}: {}",
            out.stderr
        );
    }
    let out = ipfib(&["completions", "tcsh"], None);
    assert!(
        !out.success && out.stderr.contains("tcsh"),
        "{}",
        out.stderr
    );
}

/// The text of a roff page without its preamble: the first request must be the title.
fn check_roff(page: &str, title: &str) {
    let first = page
        .lines()
        .find(|l| !l.starts_with(".ie") && !l.starts_with(".el"))
        .unwrap_or_default();
    assert!(first.starts_with(&format!(".TH {title} 1")), "{first}");
    assert!(page.contains(".SH NAME"), "{page}");
    // Where groff is installed, it formats the page without a warning.
    let groff = std::process::Command::new("groff")
        .args(["-man", "-Tutf8", "-ww", "-z"])
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    if let Ok(mut child) = groff {
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(page.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success() && stderr.is_empty(), "groff: {stderr}");
    }
}

#[test]
fn the_man_page_names_every_subcommand_and_is_roff() {
    let out = ipfib(&["man"], None);
    assert!(out.success, "{}", out.stderr);
    check_roff(&out.stdout, "ipfib");
    for name in SUBCOMMANDS {
        // roff writes a hyphen as `\-`.
        let roff = name.replace('-', r"\-");
        assert!(out.stdout.contains(&roff), "{name} missing");
    }
}

#[test]
fn man_out_writes_one_page_per_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("man");
    let out = ipfib(&["man", "--out", pages.to_str().unwrap()], None);
    assert!(out.success, "{}", out.stderr);
    let mut expected = vec!["ipfib".to_string()];
    expected.extend(SUBCOMMANDS.iter().map(|s| format!("ipfib-{s}")));
    expected.extend(["ipfib-gen-fib".into(), "ipfib-gen-trace".into()]);
    for name in &expected {
        let page = std::fs::read_to_string(pages.join(format!("{name}.1")))
            .unwrap_or_else(|e| panic!("{name}.1: {e}"));
        check_roff(&page, name);
        assert!(out.stderr.contains(&format!("{name}.1")), "{}", out.stderr);
    }
    let bench = std::fs::read_to_string(pages.join("ipfib-bench.1")).unwrap();
    assert!(bench.contains(r"\-\-engines"), "{bench}");
    // A directory that cannot be made is an error naming it, not a panic.
    let file = dir.path().join("file");
    std::fs::write(&file, "").unwrap();
    let bad = file.join("sub");
    let out = ipfib(&["man", "--out", bad.to_str().unwrap()], None);
    assert!(!out.success && out.stderr.contains("sub"), "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}
