//! Gives the memory that the allocator holds free back to the system.
//!
//! glibc's `malloc` keeps what a program frees for its next allocations: the top of each
//! arena is returned once it is large, but free memory between chunks still in use stays
//! resident. A server that has just routed a burst of records holds tens of MiB that way
//! (docs/benchmarks.md: 66 MiB resident after a run of the side-by-side scenarios, 41 MiB
//! once trimmed, of which 13 MiB in use). `malloc_trim(0)` hands every whole free page back
//! (`MADV_DONTNEED`), arena by arena, each under its own lock: cheap when the program is
//! quiet, which is when the server calls it.
//!
//! Elsewhere than glibc, [`release_free_memory`] does nothing. [`resident_kib`] says how much
//! a process holds (the server watches its own; the benchmarks and tests, their servers').

/// Returns free memory to the system, where the allocator allows it (glibc); returns true
/// if some was returned.
pub fn release_free_memory() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` takes a byte count to keep at the top of the main arena and
        // no pointers; it takes each arena's lock itself, so any thread may call it at any
        // time while others allocate.
        unsafe { libc::malloc_trim(0) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// Returns the resident memory of process `pid` in KiB (`VmRSS` in `/proc/PID/status`), or
/// `None` where it cannot be read (not Linux, or the process is gone).
pub fn resident_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_freed_by_a_burst_goes_back() {
        // Many small allocations from another thread (so in an arena of their own, as the
        // server's workers' are), every other one kept: the freed ones lie between chunks
        // still in use, where only a trim returns them.
        let kept = std::thread::spawn(|| {
            let all: Vec<Vec<u8>> = (0..200_000).map(|i| vec![i as u8; 200]).collect();
            all.into_iter().step_by(64).collect::<Vec<_>>()
        })
        .join()
        .unwrap();
        let resident = || resident_kib(std::process::id()).expect("VmRSS");
        let before = resident();
        let released = release_free_memory();
        let after = resident();
        if cfg!(all(target_os = "linux", target_env = "gnu")) {
            assert!(released, "nothing released");
            assert!(
                after + 8 * 1024 < before,
                "{before} KiB resident, then {after} KiB"
            );
        }
        assert_eq!(kept.len(), 200_000usize.div_ceil(64));
    }
}
