//! The origin this process puts on its log records.

use std::sync::OnceLock;

use herald_proto::Origin;

/// Returns host, process and thread of the caller.
pub fn local_origin() -> Origin {
    static BASE: OnceLock<Origin> = OnceLock::new();
    let base = BASE.get_or_init(|| Origin {
        host: host_name(),
        process: process_name(),
        ..Origin::default()
    });
    Origin {
        thread: thread_name(),
        ..base.clone()
    }
}

/// Returns the calling thread's name: its Rust name; for a thread Rust did not start (a C
/// program's, through the C API) the system's name for it (Linux: its `comm`), which is what
/// its program calls it; else `ThreadId(n)`.
pub fn thread_name() -> String {
    let thread = std::thread::current();
    if let Some(name) = thread.name() {
        return name.to_string();
    }
    std::fs::read_to_string("/proc/thread-self/comm")
        .ok()
        .map(|name| name.trim_end().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| format!("{:?}", thread.id()))
}

fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok())
        .map(|name| name.trim().to_string())
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".to_string())
}

fn process_name() -> String {
    let exe = std::env::current_exe().ok();
    let name = exe
        .as_deref()
        .and_then(|p| p.file_name())
        .map(|n| n.to_string_lossy().into_owned());
    format!(
        "{}[{}]",
        name.unwrap_or_else(|| "unknown".to_string()),
        std::process::id()
    )
}
