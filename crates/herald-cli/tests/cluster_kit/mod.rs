//! What the cluster tests share: members of a cluster `test` as real `herald serve`
//! processes and fast heartbeats (`ServeProcess::freeze`/`thaw` hang and wake them).

#![allow(dead_code)] // each test file uses its own part

use herald_testkit::ServeProcess;

pub const HERALD: &str = env!("CARGO_BIN_EXE_herald");

/// Heartbeats fast enough that a hung member is noticed within a second.
pub const FAST_HEARTBEAT: [(&str, &str); 2] = [
    ("HERALD_HEARTBEAT_INTERVAL", "200ms"),
    ("HERALD_HEARTBEAT_TIMEOUT", "1s"),
];

/// Starts member `name` of cluster `test` (its route listener on a free port), joining
/// through `seed`, with `extra` arguments and `env` settings.
pub fn member(
    name: &str,
    seed: Option<&ServeProcess>,
    extra: &[&str],
    env: &[(&str, &str)],
) -> ServeProcess {
    let mut args = vec![
        "--name",
        name,
        "--cluster",
        "test",
        "--cluster-listen",
        "127.0.0.1:0",
    ];
    let seed_url = seed.map(|s| format!("herald://{}", s.route_addr.as_deref().unwrap()));
    if let Some(url) = &seed_url {
        args.extend(["--route", url]);
    }
    args.extend(extra);
    ServeProcess::start_with_env(HERALD, &args, env)
}
