//! `ipfib follow` over loopback TCP, without a BGP daemon: the GoBGP capture
//! (`crates/ipfib-io/tests/data/bmp-sample.bin`) and hostile sessions, checked through the
//! lookup socket, the log and the JSON report. Every wait polls with a deadline.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::os::fd::FromRawFd;
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SAMPLE: &[u8] = include_bytes!("../../ipfib-io/tests/data/bmp-sample.bin");

/// The byte offsets where the sample's messages end.
fn boundaries() -> Vec<usize> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < SAMPLE.len() {
        let len = u32::from_be_bytes(SAMPLE[at + 1..at + 5].try_into().unwrap()) as usize;
        at += len;
        out.push(at);
    }
    out
}

/// The sample up to and including the IPv6 End-of-RIB: Initiation, Peer Up, 599 IPv4 and
/// 251 IPv6 routes of peer 127.0.0.1, and nothing after (the session stays open).
fn dump() -> &'static [u8] {
    &SAMPLE[..boundaries()[853]]
}

/// The first IPv6 route message of the sample (message 603).
fn first_v6_message() -> &'static [u8] {
    let b = boundaries();
    &SAMPLE[b[601]..b[602]]
}

struct Follow {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
    bmp: SocketAddr,
    socket: PathBuf,
    json: PathBuf,
    _dir: tempfile::TempDir,
}

fn wait_for(what: &str, budget: Duration, mut ok: impl FnMut() -> bool) {
    let start = Instant::now();
    while !ok() {
        assert!(
            start.elapsed() < budget,
            "timed out after {budget:?} waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

impl Follow {
    fn start(extra: &[&str]) -> Follow {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("fib.sock");
        let json = dir.path().join("follow.json");
        let mut child = Command::new(env!("CARGO_BIN_EXE_ipfib"))
            .args(["follow", "--bmp", "127.0.0.1:0", "--interval", "200ms"])
            .arg("--socket")
            .arg(&socket)
            .arg("--json")
            .arg(&json)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().unwrap();
        let sink = log.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                sink.lock().unwrap().push(line);
            }
        });
        let mut follow = Follow {
            child,
            log,
            bmp: "0.0.0.0:0".parse().unwrap(),
            socket,
            json,
            _dir: dir,
        };
        wait_for("the listening line", Duration::from_secs(20), || {
            follow.find("listening for BMP on ").is_some()
        });
        let line = follow.find("listening for BMP on ").unwrap();
        follow.bmp = line.rsplit(' ').next().unwrap().parse().unwrap();
        follow
    }

    fn find(&self, needle: &str) -> Option<String> {
        self.log
            .lock()
            .unwrap()
            .iter()
            .find(|l| l.contains(needle))
            .cloned()
    }

    fn count(&self, needle: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(needle))
            .count()
    }

    /// A session from 127.0.0.`host`.
    fn connect(&self, host: u8) -> TcpStream {
        connect_from(Ipv4Addr::new(127, 0, 0, host), self.bmp)
    }

    fn lookup(&self, addrs: &[&str]) -> Vec<String> {
        let mut s = UnixStream::connect(&self.socket).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        for a in addrs {
            writeln!(s, "{a}").unwrap();
        }
        s.shutdown(std::net::Shutdown::Write).unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).unwrap();
        out.lines().map(str::to_string).collect()
    }

    /// SIGTERM, then the JSON report.
    fn stop(mut self) -> serde_json::Value {
        let status = Command::new("kill")
            .arg(self.child.id().to_string())
            .status()
            .unwrap();
        assert!(status.success());
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "follow exited {status}: {:?}",
                    self.log.lock().unwrap()
                );
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "follow did not stop"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        let text = std::fs::read_to_string(&self.json).unwrap();
        serde_json::from_str(&text).unwrap()
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A TCP connection to `to` from `from` (port chosen by the kernel): std cannot bind before
/// connecting, so the socket is made with libc.
fn connect_from(from: Ipv4Addr, to: SocketAddr) -> TcpStream {
    let SocketAddr::V4(to) = to else {
        panic!("IPv4 only")
    };
    let sockaddr = |a: SocketAddrV4| libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: plain socket calls on a descriptor this function owns; the address structs
    // live across the calls and `len` is their size. The descriptor goes to the TcpStream,
    // which closes it.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        assert!(fd >= 0, "socket: {}", std::io::Error::last_os_error());
        let local = sockaddr(SocketAddrV4::new(from, 0));
        let remote = sockaddr(to);
        let ok = libc::bind(fd, (&raw const local).cast(), len) == 0
            && libc::connect(fd, (&raw const remote).cast(), len) == 0;
        let err = std::io::Error::last_os_error();
        let stream = TcpStream::from_raw_fd(fd);
        assert!(ok, "connecting from {from}: {err}");
        stream
    }
}

/// What the socket answers for an address of a v4 route and one of a v6 route of the dump
/// (the capture also holds 0.0.0.0/0, so no IPv4 address answers `-` while it is held).
fn probes(f: &Follow) -> Vec<String> {
    f.lookup(&["1.0.4.1", "2001:200::1"])
}

#[test]
fn the_capture_fills_the_table_and_lookups_answer_with_its_next_hops() {
    let f = Follow::start(&["--socket-format", "hop"]);
    let mut s = f.connect(2);
    s.write_all(dump()).unwrap();
    wait_for("two End-of-RIB marks", Duration::from_secs(20), || {
        f.count("EoR ") == 2
    });
    let answers = probes(&f);
    // 1.0.4.0/24 and 2001:200::/32 of the capture (decoded by a separate Python reading of
    // its NEXT_HOP and MP_REACH_NLRI bytes).
    assert_eq!(answers, ["157.130.10.233", "2001:668:0:4::2"]);
    assert!(
        f.find("EoR 127.0.0.2:")
            .unwrap()
            .contains("ipv4 (599 routes"),
        "{:?}",
        f.find("EoR")
    );
    // The rest of the capture: 5 live changes and the Peer Down.
    s.write_all(&SAMPLE[dump().len()..]).unwrap();
    wait_for("the table to empty", Duration::from_secs(10), || {
        f.lookup(&["1.0.4.1", "2001:200::1"]) == ["-", "-"]
    });
    drop(s);
    wait_for("the session end", Duration::from_secs(10), || {
        f.find("session ended").is_some()
    });
    let json = f.stop();
    assert_eq!(json["routes"], 0);
    // 857 route monitoring messages of one prefix each, two of them End-of-RIBs.
    assert_eq!(json["bmp_route_changes"], 855);
    assert_eq!(json["routers"][0]["address"], "127.0.0.2");
    for key in [
        "visible_us_p50",
        "visible_us_p99",
        "peak_rss_bytes",
        "next_hops",
        "peers",
        "updates",
    ] {
        assert!(json.get(key).is_some(), "{key} missing from {json}");
    }
}

#[test]
fn hostile_sessions_are_closed_with_an_error_naming_the_router_and_change_nothing() {
    let f = Follow::start(&["--engine", "dxr"]);
    // Router .2: the IPv4 part of the dump, kept open.
    let b = boundaries();
    let mut good = f.connect(2);
    good.write_all(&SAMPLE[..b[601]]).unwrap();
    wait_for("the IPv4 End-of-RIB", Duration::from_secs(20), || {
        f.count("EoR ") == 1
    });
    let before = probes(&f);
    assert_ne!(before[0], "-");
    let mut absurd = vec![3];
    absurd.extend(u32::MAX.to_be_bytes());
    absurd.push(0);
    let mut v6 = SAMPLE[..b[1]].to_vec();
    v6.extend(first_v6_message());
    let cases: [(&str, Vec<u8>, bool, &str); 4] = [
        (
            "garbage",
            b"GET / HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
            false,
            "BMP version 71",
        ),
        ("absurd length", absurd, false, "message length 4294967295"),
        (
            "truncated",
            SAMPLE[..b[2] - 3].to_vec(),
            true,
            "the session ended inside a message",
        ),
        ("IPv6 to dxr", v6, false, "engine dxr holds no IPv6 routes"),
    ];
    for (i, (name, bytes, close, problem)) in cases.into_iter().enumerate() {
        let host = 10 + i as u8;
        let mut s = f.connect(host);
        s.write_all(&bytes).unwrap();
        if close {
            s.shutdown(std::net::Shutdown::Write).unwrap();
        }
        let router = format!("session closed: router 127.0.0.{host}:");
        wait_for(name, Duration::from_secs(10), || f.find(&router).is_some());
        let line = f.find(&router).unwrap();
        assert!(line.contains(problem), "{name}: {line}");
        assert!(line.contains("at byte "), "{name}: {line}");
        // The socket is closed by the station: reading gives EOF (or a reset).
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let mut buf = [0u8; 16];
        assert!(
            matches!(s.read(&mut buf), Ok(0) | Err(_)),
            "{name}: still open"
        );
        assert_eq!(probes(&f), before, "{name}: the table changed");
    }
    drop(good);
    let json = f.stop();
    let failures: u64 = json["routers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["failures"].as_u64().unwrap())
        .sum();
    assert_eq!(failures, 4);
}

#[test]
fn eight_routers_at_once_share_a_peer_and_its_routes_last_while_any_reports_it() {
    // Every router reports the same peer 127.0.0.1: the table is the dump once, and stays
    // while any router still reports it; the next hops are the capture's.
    let f = Follow::start(&["--socket-format", "hop"]);
    let threads: Vec<_> = (0..8u8)
        .map(|i| {
            let s = f.connect(20 + i);
            std::thread::spawn(move || {
                let mut s = s;
                s.write_all(dump()).unwrap();
                s
            })
        })
        .collect();
    let streams: Vec<TcpStream> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    wait_for("16 End-of-RIB marks", Duration::from_secs(30), || {
        f.count("EoR ") == 16
    });
    let all = probes(&f);
    assert_ne!(all[0], "-");
    // Close seven: the eighth still holds everything.
    for s in &streams[..7] {
        s.shutdown(std::net::Shutdown::Both).unwrap();
    }
    wait_for("seven session ends", Duration::from_secs(10), || {
        f.count("session ended") == 7
    });
    assert_eq!(probes(&f), all);
    drop(streams);
    wait_for("the table to empty", Duration::from_secs(10), || {
        probes(&f)[..2] == ["-", "-"]
    });
    let json = f.stop();
    assert_eq!(json["routers"].as_array().unwrap().len(), 8);
    assert_eq!(json["routes"], 0);
}

#[test]
fn save_writes_a_table_lookup_opens_and_port_zero_is_printed() {
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("fib.saved");
    let f = Follow::start(&["--save", saved.to_str().unwrap(), "--save-every", "100ms"]);
    assert_ne!(f.bmp.port(), 0);
    let mut s = f.connect(2);
    s.write_all(dump()).unwrap();
    wait_for("two End-of-RIB marks", Duration::from_secs(20), || {
        f.count("EoR ") == 2
    });
    let live = f.lookup(&["1.0.4.1", "2001:200::1", "10.255.255.255"]);
    wait_for("the saved table", Duration::from_secs(20), || {
        let out = Command::new(env!("CARGO_BIN_EXE_ipfib"))
            .args(["lookup", "--fib"])
            .arg(&saved)
            .args(["1.0.4.1", "2001:200::1", "10.255.255.255"])
            .output()
            .unwrap();
        out.status.success()
            && String::from_utf8_lossy(&out.stdout)
                .lines()
                .collect::<Vec<_>>()
                == live
    });
    drop(s);
    f.stop();
}

#[test]
fn readers_look_up_while_routes_arrive_and_each_interval_reports_their_rate() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.txt");
    std::fs::write(
        &trace,
        "# both families\n1.0.4.1\n2001:200::1\n10.255.255.255\n",
    )
    .unwrap();
    let f = Follow::start(&["--readers", "2", "--reader-trace", trace.to_str().unwrap()]);
    let mut s = f.connect(2);
    s.write_all(dump()).unwrap();
    wait_for("two End-of-RIB marks", Duration::from_secs(20), || {
        f.count("EoR ") == 2
    });
    wait_for(
        "a progress line with the lookup rate",
        Duration::from_secs(20),
        || f.find(" M/s").is_some_and(|l| l.contains("lookups ")),
    );
    drop(s);
    let json = f.stop();
    assert!(json["lookups"].as_u64().unwrap() > 0, "{json}");
    let intervals = json["intervals"].as_array().unwrap();
    assert!(!intervals.is_empty());
    assert!(
        intervals
            .iter()
            .any(|i| i["lookup_mlps"].as_f64().unwrap() > 0.0),
        "{intervals:?}"
    );
    assert!(intervals.iter().any(|i| i["updates"].as_u64().unwrap() > 0));
}

#[test]
fn readers_need_a_trace_and_a_bad_one_is_named() {
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_ipfib"))
            .args(["follow", "--bmp", "127.0.0.1:0"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = run(&["--readers", "1"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--reader-trace"));
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("trace.txt");
    std::fs::write(&trace, "1.0.4.1\nnot-an-address\n").unwrap();
    let out = run(&["--readers", "1", "--reader-trace", trace.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("trace.txt:2: not an IP address"), "{err}");
}
