//! Which CPUs the run may use and uses, and pinning of benchmark threads.
//!
//! Numbers are only comparable when the lookups run on a known core: `taskset -c 1 ipfib bench`
//! restricts the process, this module reads that restriction back for the report and, with
//! `--threads N`, pins thread `i` to the `i`-th allowed CPU so threads do not migrate mid-run.

/// The CPUs this process may run on (its affinity mask), in increasing order; empty when the
/// mask cannot be read.
pub fn allowed() -> Vec<usize> {
    // SAFETY: `cpu_set_t` is a plain bit array for which all-zero is a valid (empty) value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 is the calling thread; the size and pointer describe `set`, which lives
    // for the duration of the call.
    let rc = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) };
    if rc != 0 {
        return Vec::new();
    }
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c < CPU_SETSIZE`, the number of bits in `set`.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Restricts the calling thread to one CPU; false when the kernel refuses (the thread then runs
/// unpinned, which the report says).
pub fn pin_current(cpu: usize) -> bool {
    pin_current_to(&[cpu])
}

/// Restricts the calling thread (and the threads it starts later) to `cpus`; false when one is
/// out of range, the list is empty or the kernel refuses.
pub fn pin_current_to(cpus: &[usize]) -> bool {
    if cpus.is_empty() || cpus.iter().any(|&c| c >= libc::CPU_SETSIZE as usize) {
        return false;
    }
    // SAFETY: as in `allowed`, all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &cpu in cpus {
        // SAFETY: `cpu < CPU_SETSIZE` was checked above, so the bit is inside `set`.
        unsafe { libc::CPU_SET(cpu, &mut set) };
    }
    // SAFETY: pid 0 is the calling thread; size and pointer describe `set`.
    unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0 }
}

/// The CPU the calling thread runs on right now, if the kernel says.
pub fn current() -> Option<usize> {
    // SAFETY: `sched_getcpu` takes no arguments and only returns a number or -1.
    let cpu = unsafe { libc::sched_getcpu() };
    usize::try_from(cpu).ok()
}

/// The CPU's model name, for the report: `/proc/cpuinfo`'s `model name` (x86), else its
/// `Hardware` or `cpu model` line (Arm, MIPS), else `unknown <arch> CPU`.
pub fn model_name() -> String {
    let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    model_in(&info).unwrap_or_else(|| format!("unknown {} CPU", std::env::consts::ARCH))
}

/// The model name in the text of `/proc/cpuinfo`, if it has one.
fn model_in(cpuinfo: &str) -> Option<String> {
    ["model name", "Hardware", "cpu model"]
        .iter()
        .find_map(|key| {
            cpuinfo.lines().find_map(|line| {
                let (k, v) = line.split_once(':')?;
                let v = v.split_whitespace().collect::<Vec<_>>().join(" ");
                (k.trim() == *key && !v.is_empty()).then_some(v)
            })
        })
}

/// Compact list form of CPU numbers: `0-3,6`.
pub fn format_list(cpus: &[usize]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        let mut end = start;
        while i + 1 < cpus.len() && cpus[i + 1] == end + 1 {
            i += 1;
            end = cpus[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_compress_runs() {
        assert_eq!(format_list(&[]), "");
        assert_eq!(format_list(&[3]), "3");
        assert_eq!(format_list(&[0, 1, 2, 3, 6]), "0-3,6");
        assert_eq!(format_list(&[1, 3, 4]), "1,3-4");
    }

    #[test]
    fn model_names_are_read_from_cpuinfo() {
        let x86 = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD  EPYC 7B13\n";
        assert_eq!(model_in(x86).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(
            model_in("Hardware\t: BCM2835\n").as_deref(),
            Some("BCM2835")
        );
        assert_eq!(model_in("model name\t:\n"), None);
        assert!(!model_name().is_empty());
    }

    #[test]
    fn the_current_cpu_is_an_allowed_one() {
        let allowed = allowed();
        assert!(!allowed.is_empty());
        let now = current().expect("Linux reports the current CPU");
        assert!(allowed.contains(&now), "{now} not in {allowed:?}");
    }

    #[test]
    fn pinning_in_a_thread_takes_effect() {
        let target = *allowed().last().unwrap();
        let seen = std::thread::spawn(move || {
            assert!(pin_current(target));
            (allowed(), current())
        })
        .join()
        .unwrap();
        assert_eq!(seen, (vec![target], Some(target)));
        assert!(!pin_current(usize::MAX));
    }
}
