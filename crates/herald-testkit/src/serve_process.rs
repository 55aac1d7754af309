//! A real `herald serve` process on a free loopback port, for tests that need a server in
//! another process (to kill it with SIGKILL, or to test the binary itself).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A running `herald serve`; killed when dropped.
#[derive(Debug)]
pub struct ServeProcess {
    child: Child,
    /// The address it listens on, `127.0.0.1:<port>`.
    pub addr: String,
    /// The address it serves HTTP on, `127.0.0.1:<port>`.
    pub http_addr: String,
    /// The address of its route listener, when started with `--cluster`.
    pub route_addr: Option<String>,
    /// Its data directory (fresh for each process).
    pub data_dir: std::path::PathBuf,
    /// Whether the directory was made for this process (and goes with it).
    owns_data_dir: bool,
}

impl ServeProcess {
    /// Starts `herald` (the binary at `binary`) with `serve --listen 127.0.0.1:0 --http
    /// 127.0.0.1:0`, the log level `warn`, and `extra` arguments; waits until it says where
    /// it listens.
    ///
    /// # Panics
    /// If the process does not start or does not print its address.
    pub fn start(binary: &str, extra: &[&str]) -> ServeProcess {
        ServeProcess::start_with_env(binary, extra, &[])
    }

    /// As [`ServeProcess::start`], with `HERALD_*` (or other) environment variables set.
    ///
    /// # Panics
    /// If the process does not start or does not print its address.
    pub fn start_with_env(binary: &str, extra: &[&str], env: &[(&str, &str)]) -> ServeProcess {
        let mut process = ServeProcess::start_in(binary, &crate::temp_dir("serve"), extra, env);
        process.owns_data_dir = true;
        process
    }

    /// As [`ServeProcess::start_with_env`], on the data directory `data_dir` (e.g. that of
    /// a server killed before, to test what survives a restart).
    ///
    /// # Panics
    /// If the process does not start or does not print its address.
    pub fn start_in(
        binary: &str,
        data_dir: &std::path::Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> ServeProcess {
        let data_dir = data_dir.to_path_buf();
        let mut child = Command::new(binary)
            .args(["serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"])
            .args(["--log-level", "warn"])
            .arg("--data-dir")
            .arg(&data_dir)
            .args(extra)
            .envs(env.iter().copied())
            .env_remove("HERALD_SERVER")
            .stderr(Stdio::piped())
            .spawn()
            .expect("herald serve starts");
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        // Diagnostics (e.g. a warning that the archive's Cassandra node is not up yet) may
        // come before the address lines; they are skipped, and shown if the address never comes.
        let mut skipped = Vec::new();
        let mut line_after = |prefix: &str| loop {
            let Some(line) = lines.next().and_then(Result::ok) else {
                let _ = child.kill();
                panic!(
                    "serve never printed {prefix:?}; it printed:\n{}",
                    skipped.join("\n")
                );
            };
            match line.strip_prefix(prefix) {
                Some(rest) => break rest.to_string(),
                None => skipped.push(line),
            }
        };
        let addr = line_after("herald serving on ");
        let http_addr = line_after("herald http on ");
        let route_addr = extra.contains(&"--cluster").then(|| {
            let line = line_after("  cluster: ");
            line.rsplit(" routes on ")
                .next()
                .unwrap_or_default()
                .to_string()
        });
        // Keep draining stderr so the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        ServeProcess {
            child,
            addr,
            http_addr,
            route_addr,
            data_dir,
            owns_data_dir: false,
        }
    }

    /// Returns the resident memory of the process, in KiB (from `/proc/<pid>/status`).
    ///
    /// # Panics
    /// If the process's status cannot be read (not Linux, or the process is gone).
    pub fn rss_kib(&self) -> u64 {
        herald_memory::resident_kib(self.child.id()).expect("the process's VmRSS")
    }

    /// Returns `herald://<addr>`.
    pub fn url(&self) -> String {
        format!("herald://{}", self.addr)
    }

    /// Returns `http://<http_addr>`.
    pub fn http_url(&self) -> String {
        format!("http://{}", self.http_addr)
    }

    /// Returns the process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// Stops the process as Ctrl-C or a service manager would — SIGTERM, sent with
    /// `kill -TERM <pid>` — and waits at most `timeout` for it to exit; returns its status.
    ///
    /// # Panics
    /// If the signal cannot be sent, or the process has not exited within `timeout` (it is
    /// then killed).
    pub fn terminate(&mut self, timeout: Duration) -> ExitStatus {
        terminate(&mut self.child, timeout)
    }

    /// Freezes the process, as a hung machine would be: SIGSTOP, then waits until the kernel
    /// has stopped it (`kill` returns before; a test that went on at once found the server
    /// still answering).
    ///
    /// # Panics
    /// If the signal cannot be sent or the process is not stopped within 10 s.
    pub fn freeze(&self) {
        self.signal_and_wait("-STOP", true);
    }

    /// Lets a frozen process run again (SIGCONT) and waits until it does.
    ///
    /// # Panics
    /// If the signal cannot be sent or the process does not run again within 10 s.
    pub fn thaw(&self) {
        self.signal_and_wait("-CONT", false);
    }

    fn signal_and_wait(&self, signal: &str, stopped: bool) {
        let pid = self.id();
        send_signal(pid, signal);
        let deadline = Instant::now() + Duration::from_secs(10);
        // The state is the field after the command's name, which is in parentheses.
        let state = || {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
            after.split_whitespace().next().unwrap_or("?").to_string()
        };
        while (state() == "T") != stopped {
            assert!(
                Instant::now() < deadline,
                "process {pid} is not {} after kill {signal} (state {})",
                if stopped { "stopped" } else { "running" },
                state()
            );
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Kills the process with SIGKILL (no goodbye to its clients) and reaps it.
    ///
    /// # Panics
    /// If the process cannot be killed.
    pub fn kill(&mut self) {
        self.child.kill().expect("kill");
        self.child.wait().expect("reaped");
    }
}

/// Sends `signal` (`-TERM`, `-STOP` …) to process `pid` with `kill`, so no libc is needed.
///
/// # Panics
/// If `kill` cannot run or fails.
fn send_signal(pid: u32, signal: &str) {
    let sent = Command::new("kill")
        .args([signal, &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(sent.success(), "kill {signal} {pid} failed: {sent}");
}

/// Sends SIGTERM to `child` (with `kill -TERM <pid>`, so no libc is needed) and waits at
/// most `timeout` for it to exit; returns its status.
///
/// # Panics
/// If the signal cannot be sent, or the process has not exited within `timeout` (it is then
/// killed).
pub fn terminate(child: &mut Child, timeout: Duration) -> ExitStatus {
    send_signal(child.id(), "-TERM");
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("waitable") {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "process {} did not exit within {timeout:?} of SIGTERM",
                child.id()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

impl Drop for ServeProcess {
    /// Kills the process; removes the data directory it was given by
    /// [`ServeProcess::start`], unless the test is failing (then it stays, to look at).
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if self.owns_data_dir && !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.data_dir);
        }
    }
}
