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
    let thread = std::thread::current();
    Origin {
        thread: thread
            .name()
            .map_or_else(|| format!("{:?}", thread.id()), str::to_string),
        ..base.clone()
    }
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
