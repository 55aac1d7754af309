//! CPU time: of a thread of this process, from `/proc/thread-self/stat`, and of a server
//! running in this process (`herald bench` without `--server`): the sum over its threads — the `herald-server` runtime's workers and blocking threads,
//! the archive's writer (`herald-archive`) and spill (`herald-spill`) — read from
//! `/proc/self/task` (Linux; `None` elsewhere). The bench's own threads (`herald-bench`,
//! the main thread, a sender's) are not counted. A server thread that ends between two
//! readings takes its time with it (the runtime's blocking threads may; the workers and
//! the archive's last as long as the server).

use nix::unistd::{sysconf, SysconfVar};

/// Thread names (as the kernel keeps them, 15 bytes at most) of the server's threads.
const SERVER_THREADS: [&str; 3] = ["herald-server", "herald-archive", "herald-spill"];

/// Returns the CPU seconds the calling thread has used so far.
pub fn thread_seconds() -> Option<f64> {
    let ticks = sysconf(SysconfVar::CLK_TCK).ok().flatten()? as f64;
    let stat = std::fs::read_to_string("/proc/thread-self/stat").ok()?;
    Some(ticks_of(&stat)? as f64 / ticks)
}

/// Returns the CPU seconds the server's threads in this process have used so far.
pub fn server_seconds() -> Option<f64> {
    let ticks = sysconf(SysconfVar::CLK_TCK).ok().flatten()? as f64;
    let mut total = 0u64;
    for entry in std::fs::read_dir("/proc/self/task").ok()? {
        // A thread gone since the listing has nothing more to count.
        let Some(stat) = entry
            .ok()
            .and_then(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        else {
            continue;
        };
        total += server_ticks(&stat).unwrap_or(0);
    }
    Some(total as f64 / ticks)
}

/// The user and system clock ticks of one `/proc/…/stat` line when it is a server
/// thread's: `pid (comm) state …`, `utime` and `stime` the 14th and 15th fields.
fn server_ticks(stat: &str) -> Option<u64> {
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let name = stat.get(open + 1..close)?;
    if !SERVER_THREADS.iter().any(|prefix| name.starts_with(prefix)) {
        return None;
    }
    ticks_of(stat)
}

/// The user and system clock ticks of one `/proc/…/stat` line.
fn ticks_of(stat: &str) -> Option<u64> {
    let close = stat.rfind(')')?;
    let mut fields = stat.get(close + 2..)?.split(' ').skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_server_threads_ticks_and_skips_others() {
        let line = "4242 (herald-server) S 1 4242 4242 0 -1 4194368 120 0 0 0 731 86 0 0 20 0 4 0";
        assert_eq!(server_ticks(line), Some(817));
        let odd = "4243 (herald-archive) R 1 2 3 0 -1 0 0 0 0 0 5 6 0 0 20 0 1 0";
        assert_eq!(server_ticks(odd), Some(11));
        let bench = "4244 (herald-bench) S 1 4242 4242 0 -1 4194368 120 0 0 0 731 86 0 0";
        assert_eq!(server_ticks(bench), None);
    }

    #[test]
    fn counts_the_time_of_a_thread_named_as_the_servers() {
        let before = server_seconds().expect("Linux /proc");
        let spun = std::thread::Builder::new()
            .name("herald-server-test".into())
            .spawn(|| {
                let started = std::time::Instant::now();
                let mut x = 0u64;
                while started.elapsed() < std::time::Duration::from_millis(300) {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                }
                // Read before the thread ends: an ended thread's time is gone from the list.
                (x, server_seconds().expect("Linux /proc"))
            })
            .expect("a thread")
            .join()
            .expect("the thread");
        assert!(spun.1 - before >= 0.2, "{before} → {}", spun.1);
        let mine = thread_seconds().expect("Linux /proc");
        let started = std::time::Instant::now();
        while started.elapsed() < std::time::Duration::from_millis(200) {}
        assert!(thread_seconds().expect("Linux /proc") - mine >= 0.1);
    }
}
