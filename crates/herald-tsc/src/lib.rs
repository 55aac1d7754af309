//! The processor's time-stamp counter, read in one instruction, as a clock for the
//! logger's hot path: reading it costs ~12 ns on the 2-core test machine, against ~30–43 ns
//! for `clock_gettime(CLOCK_REALTIME)` (docs/benchmarks.md). A log call keeps the raw
//! count; the logger's background side turns counts into wall-clock time.
//!
//! The counter is used only where it is a clock: an x86-64 Linux machine whose counter
//! ticks at one rate whatever the core's frequency and sleep state (`constant_tsc` and
//! `nonstop_tsc` in `/proc/cpuinfo`) and that the kernel itself keeps time with (the current
//! clock source is `tsc`, which Linux gives up when the cores' counters disagree).
//! Elsewhere [`Counter::invariant`] says no and callers read the system clock.

/// Proof that the time-stamp counter is usable as a clock on this machine.
#[derive(Debug, Clone, Copy)]
pub struct Counter(());

impl Counter {
    /// Returns the counter if it is usable as a clock here (see the crate's documentation).
    pub fn invariant() -> Option<Counter> {
        if cfg!(all(target_arch = "x86_64", target_os = "linux")) && usable() {
            Some(Counter(()))
        } else {
            None
        }
    }

    /// Returns the counter's value: ticks at a constant rate, the same on every core.
    #[inline(always)]
    pub fn read(self) -> u64 {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: RDTSC reads a register: it has no preconditions, touches no memory and
            // exists on every x86-64 processor.
            unsafe { core::arch::x86_64::_rdtsc() }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            // `invariant` gives no `Counter` on other processors.
            unreachable!("no time-stamp counter on this processor")
        }
    }
}

/// Whether the processor says its counter is invariant and the kernel keeps time with it.
fn usable() -> bool {
    let Ok(info) = std::fs::read_to_string("/proc/cpuinfo") else {
        return false;
    };
    let Some(flags) = info.lines().find(|line| line.starts_with("flags")) else {
        return false;
    };
    let has = |flag: &str| flags.split_whitespace().any(|f| f == flag);
    let source =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource");
    has("constant_tsc") && has("nonstop_tsc") && source.is_ok_and(|s| s.trim() == "tsc")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_moves_forward_with_time() {
        let Some(counter) = Counter::invariant() else {
            return; // not usable here: callers read the system clock
        };
        let first = counter.read();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let second = counter.read();
        assert!(second > first, "{first} then {second}");
    }
}
