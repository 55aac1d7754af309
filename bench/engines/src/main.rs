//! Compares SQLite (rusqlite), fjall and redb on Herald's archive layout.
//!
//!   herald-engines-bench all [--rounds 3] [--dir DIR] [--timeout SECS] [--build-times sqlite=S,fjall=S,redb=S]
//!   herald-engines-bench run ENGINE DIR          # one engine once (what `all` starts)
//!
//! `all` runs every engine compiled in (cargo features `sqlite`, `fjall`, `redb`) once per
//! round, one after another, each in a fresh process, and prints the medians as a markdown
//! table and one JSON line. `bench/engines.sh` builds and runs it.

mod engine;
mod workload;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use engine::{Engine, ReadSum, Result};
use workload::{day_of, signal_names, Gen, Rec, BLOB_LEN, DAY0_NS, NS_PER_DAY, NS_PER_S};

const INGEST_RECORDS: usize = 2_000_000;
const INGEST_NAMES: usize = 1_000;
const BATCH: usize = 10_000;
const DAY2_RECORDS: usize = 100_000;
const READ_NAMES: usize = 10;
const READ_NAME: usize = 4; // SIG.0005.value
const READ_TICKS: i64 = 86_400;
const READ_REPEATS: usize = 5;

fn engines() -> Vec<&'static str> {
    let mut v = Vec::new();
    if cfg!(feature = "sqlite") {
        v.push("sqlite");
    }
    if cfg!(feature = "fjall") {
        v.push("fjall");
    }
    if cfg!(feature = "redb") {
        v.push("redb");
    }
    v
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("run") if args.len() == 3 => run_one(&args[1], Path::new(&args[2])),
        Some("all") => all(&args[1..]),
        _ => {
            eprintln!("usage: herald-engines-bench all [--rounds N] [--dir DIR] [--timeout SECS] [--build-times k=v,…] | run ENGINE DIR");
            std::process::exit(2);
        }
    };
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

// ---------------------------------------------------------------------------------------------
// One engine, once (the child process).

fn run_one(engine: &str, dir: &Path) -> Result<()> {
    match engine {
        #[cfg(feature = "sqlite")]
        "sqlite" => {
            println!("NOTE sqlite_version {}", rusqlite::version());
            if let Ok(p) = std::env::var("HERALD_BENCH_SQLITE_PRAGMAS") {
                note("pragmas", &format!("HERALD_BENCH_SQLITE_PRAGMAS={p}"));
            }
            workload_run::<engine::sqlite::Sqlite>(dir)
        }
        #[cfg(feature = "fjall")]
        "fjall" => workload_run::<engine::fjall::Fjall>(dir),
        #[cfg(feature = "redb")]
        "redb" => workload_run::<engine::redb::Redb>(dir),
        other => Err(format!(
            "engine `{other}` is not compiled in (features: {:?})",
            engines()
        )
        .into()),
    }
}

fn result(key: &str, value: f64) {
    println!("RESULT {key} {value}");
}

fn note(key: &str, text: &str) {
    println!("NOTE {key} {text}");
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// Allocated (blocks) and apparent bytes of everything under `dir`.
fn disk_usage(dir: &Path) -> (u64, u64) {
    use std::os::unix::fs::MetadataExt;
    let mut allocated = 0;
    let mut apparent = 0;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return (0, 0);
    };
    for entry in entries.flatten() {
        let Ok(meta) = entry.metadata() else { continue };
        if meta.is_dir() {
            let (a, b) = disk_usage(&entry.path());
            allocated += a;
            apparent += b;
        } else {
            allocated += meta.blocks() * 512;
            apparent += meta.len();
        }
    }
    (allocated, apparent)
}

fn report_size(key: &str, dir: &Path) {
    let (allocated, apparent) = disk_usage(dir);
    result(&format!("{key}_mib"), mib(allocated));
    result(&format!("{key}_apparent_mib"), mib(apparent));
    eprintln!(
        "    {key}: {:.1} MiB allocated, {:.1} MiB apparent",
        mib(allocated),
        mib(apparent)
    );
}

/// Writes `ticks` ticks of `names` (every name once per tick, 1 s apart from `t0`) in batches
/// of [`BATCH`]; returns the time spent in the engine's write calls and the wall time.
fn write_ticks<E: Engine>(
    e: &mut E,
    gen: &mut Gen,
    names: &[String],
    t0: i64,
    records: usize,
) -> Result<(Duration, Duration)> {
    let wall = Instant::now();
    let mut in_engine = Duration::ZERO;
    let mut batch: Vec<Rec> = Vec::with_capacity(BATCH);
    let mut written = 0;
    let mut tick = 0i64;
    while written < records {
        batch.clear();
        while batch.len() < BATCH && written + batch.len() < records {
            let time = t0 + tick * NS_PER_S;
            for (i, name) in names.iter().enumerate() {
                batch.push(gen.record(i, name, time));
            }
            tick += 1;
        }
        let day = day_of(batch[0].time);
        assert_eq!(
            day,
            day_of(batch[batch.len() - 1].time),
            "a batch stays within a day"
        );
        let start = Instant::now();
        e.write_batch(names, &day, &batch)?;
        in_engine += start.elapsed();
        written += batch.len();
    }
    Ok((in_engine, wall.elapsed()))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n == 0 {
        f64::NAN
    } else if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn workload_run<E: Engine>(dir: &Path) -> Result<()> {
    let started = Instant::now();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir)?;
    let ingest_dir = dir.join("ingest");
    let read_dir = dir.join("read");

    // Ingest: 2,000,000 records, 1,000 names per 1 s tick, batches of 10,000.
    let names = signal_names(INGEST_NAMES);
    let mut gen = Gen::new();
    let mut e = E::open(&ingest_dir)?;
    eprintln!("  ingest {INGEST_RECORDS} records");
    let io_before = proc_io();
    let (in_engine, wall) = write_ticks(&mut e, &mut gen, &names, DAY0_NS, INGEST_RECORDS)?;
    result("ingest_s", in_engine.as_secs_f64());
    result(
        "ingest_rps",
        INGEST_RECORDS as f64 / in_engine.as_secs_f64(),
    );
    result("ingest_wall_s", wall.as_secs_f64());
    eprintln!(
        "    {:.2} s in the engine ({:.0} records/s), {:.2} s wall",
        in_engine.as_secs_f64(),
        INGEST_RECORDS as f64 / in_engine.as_secs_f64(),
        wall.as_secs_f64()
    );
    report_size("ingest_unsettled", &ingest_dir);
    let start = Instant::now();
    let how = e.settle()?;
    result("settle_s", start.elapsed().as_secs_f64());
    note("settle", &how);
    eprintln!("    settle: {how} ({:.2} s)", start.elapsed().as_secs_f64());
    report_size("ingest_settled", &ingest_dir);
    // What the process wrote for the ingest and the settling: through write calls (wchar)
    // and as counted by the kernel towards the disk (write_bytes).
    if let (Some(a), Some(b)) = (io_before, proc_io()) {
        result("ingest_wchar_mib", mib(b.0 - a.0));
        result("ingest_write_bytes_mib", mib(b.1 - a.1));
        eprintln!(
            "    written: {:.0} MiB by write calls, {:.0} MiB towards the disk",
            mib(b.0 - a.0),
            mib(b.1 - a.1)
        );
    }
    let (allocated, _) = disk_usage(&ingest_dir);
    result("bytes_per_record", allocated as f64 / INGEST_RECORDS as f64);

    // Retention: a (smaller) next day, then drop the first day.
    let day0 = day_of(DAY0_NS);
    let day1 = day_of(DAY0_NS + NS_PER_DAY);
    write_ticks(&mut e, &mut gen, &names, DAY0_NS + NS_PER_DAY, DAY2_RECORDS)?;
    e.settle()?;
    report_size("retention_before", &ingest_dir);
    let start = Instant::now();
    e.delete_day(&day0)?;
    result("delete_ms", start.elapsed().as_secs_f64() * 1e3);
    eprintln!(
        "    delete day: {:.2} ms",
        start.elapsed().as_secs_f64() * 1e3
    );
    report_size("after_delete", &ingest_dir);
    let start = Instant::now();
    let how = e.reclaim()?;
    result("reclaim_s", start.elapsed().as_secs_f64());
    note("reclaim", &how);
    eprintln!(
        "    reclaim: {how} ({:.3} s)",
        start.elapsed().as_secs_f64()
    );
    report_size("after_reclaim", &ingest_dir);
    let left = e.read(
        &day1,
        &names[0],
        DAY0_NS + NS_PER_DAY,
        DAY0_NS + 2 * NS_PER_DAY,
    )?;
    assert_eq!(
        left.rows as usize,
        DAY2_RECORDS / INGEST_NAMES,
        "the next day survives"
    );
    drop(e);
    std::fs::remove_dir_all(&ingest_dir)?;

    // Read store: 86,400 ticks of 10 names (864,000 rows), then read one name's day and hour.
    let names = signal_names(READ_NAMES);
    let t0 = DAY0_NS + 2 * NS_PER_DAY;
    let day = day_of(t0);
    let mut e = E::open(&read_dir)?;
    let records = READ_TICKS as usize * READ_NAMES;
    eprintln!("  read store: write {records} records");
    let (in_engine, _) = write_ticks(&mut e, &mut gen, &names, t0, records)?;
    result(
        "readstore_write_rps",
        records as f64 / in_engine.as_secs_f64(),
    );
    e.settle()?;
    report_size("readstore", &read_dir);
    e.reopen()?;
    let name = &names[READ_NAME];
    let hour = (t0 + 12 * 3_600 * NS_PER_S, t0 + 13 * 3_600 * NS_PER_S);
    let check = |s: ReadSum, rows: u64| {
        assert_eq!(s.rows, rows, "rows read");
        assert_eq!(s.bytes, rows * BLOB_LEN as u64, "bytes read");
    };
    // Warm up (first read after reopening), then time.
    check(e.read(&day, name, t0, t0 + NS_PER_DAY)?, READ_TICKS as u64);
    check(e.read(&day, name, hour.0, hour.1)?, 3_600);
    let mut day_ms = Vec::new();
    let mut hour_ms = Vec::new();
    for _ in 0..READ_REPEATS {
        let start = Instant::now();
        let s = e.read(&day, name, t0, t0 + NS_PER_DAY)?;
        day_ms.push(start.elapsed().as_secs_f64() * 1e3);
        check(s, READ_TICKS as u64);
        let start = Instant::now();
        let s = e.read(&day, name, hour.0, hour.1)?;
        hour_ms.push(start.elapsed().as_secs_f64() * 1e3);
        check(s, 3_600);
    }
    let day_med = median(&mut day_ms);
    result("read_day_ms", day_med);
    result("read_day_rows_per_s", READ_TICKS as f64 / (day_med / 1e3));
    result("read_hour_ms", median(&mut hour_ms));
    eprintln!(
        "    day {day_med:.2} ms, hour {:.3} ms (median of {READ_REPEATS})",
        median(&mut hour_ms)
    );
    // A maintenance step after the reads (so they see the store as written): how small can
    // each engine make the read store?
    let start = Instant::now();
    let how = e.compact()?;
    result("compact_s", start.elapsed().as_secs_f64());
    note("compact", &how);
    eprintln!(
        "    compact: {how} ({:.2} s)",
        start.elapsed().as_secs_f64()
    );
    report_size("readstore_compacted", &read_dir);
    drop(e);
    std::fs::remove_dir_all(&read_dir)?;

    if let Some(kib) = proc_status_kib("VmHWM") {
        result("peak_rss_mib", kib as f64 / 1024.0);
    }
    result("run_s", started.elapsed().as_secs_f64());
    Ok(())
}

/// (wchar, write_bytes) of this process (all its threads).
fn proc_io() -> Option<(u64, u64)> {
    let io = std::fs::read_to_string("/proc/self/io").ok()?;
    let field = |name: &str| -> Option<u64> {
        io.lines()
            .find(|l| l.starts_with(name))?
            .split_whitespace()
            .nth(1)?
            .parse()
            .ok()
    };
    Some((field("wchar:")?, field("write_bytes:")?))
}

fn proc_status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

// ---------------------------------------------------------------------------------------------
// Every engine, several rounds (the parent).

struct Run {
    values: BTreeMap<String, f64>,
    notes: BTreeMap<String, String>,
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

fn spawn_run(engine: &str, dir: &Path, timeout: Duration) -> Result<Run> {
    let mut child = Command::new(std::env::current_exe()?)
        .args(["run", engine])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map_while(std::io::Result::ok)
            .collect::<Vec<String>>()
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if start.elapsed() > timeout {
            child.kill()?;
            child.wait()?;
            return Err(format!(
                "{engine}: over the time limit of {} s, stopped",
                timeout.as_secs()
            )
            .into());
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let lines = reader.join().map_err(|_| "reader thread")?;
    if !status.success() {
        return Err(format!("{engine}: run failed ({status})").into());
    }
    let mut run = Run {
        values: BTreeMap::new(),
        notes: BTreeMap::new(),
    };
    for line in lines {
        let mut parts = line.splitn(3, ' ');
        match (parts.next(), parts.next(), parts.next()) {
            (Some("RESULT"), Some(k), Some(v)) => {
                run.values.insert(k.to_owned(), v.parse()?);
            }
            (Some("NOTE"), Some(k), Some(v)) => {
                run.notes.insert(k.to_owned(), v.to_owned());
            }
            _ => {}
        }
    }
    Ok(run)
}

/// Version of a package in this project's Cargo.lock.
fn locked_version(package: &str) -> String {
    let lock = include_str!("../Cargo.lock");
    let needle = format!("name = \"{package}\"\nversion = \"");
    lock.find(&needle)
        .and_then(|at| lock[at + needle.len()..].split('"').next())
        .unwrap_or("?")
        .to_owned()
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn json_num(v: f64) -> String {
    if v.is_finite() {
        let s = format!("{v:.6}");
        let s = s.trim_end_matches('0').trim_end_matches('.');
        s.to_owned()
    } else {
        "null".into()
    }
}

fn all(args: &[String]) -> Result<()> {
    let mut rounds = 3usize;
    let mut dir = PathBuf::from("target/engines/data");
    let mut timeout = Duration::from_secs(180);
    let mut build_times: BTreeMap<String, f64> = BTreeMap::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--rounds" => rounds = value()?.parse()?,
            "--dir" => dir = PathBuf::from(value()?),
            "--timeout" => timeout = Duration::from_secs(value()?.parse()?),
            "--build-times" => {
                for kv in value()?.split(',').filter(|s| !s.is_empty()) {
                    let (k, v) = kv
                        .split_once('=')
                        .ok_or("--build-times takes engine=seconds,…")?;
                    build_times.insert(k.to_owned(), v.parse()?);
                }
            }
            other => return Err(format!("unknown argument `{other}`").into()),
        }
    }
    let engines = engines();
    let mut runs: BTreeMap<&str, Vec<Run>> = BTreeMap::new();
    let mut failures = Vec::new();
    let mut loads = Vec::new();
    for round in 0..rounds {
        // Rotate the order each round so no engine always runs first (or last).
        let mut order = engines.clone();
        order.rotate_left(round % engines.len());
        for engine in order {
            let load = loadavg();
            eprintln!(
                "== round {}/{rounds}: {engine} (load average {load})",
                round + 1
            );
            loads.push(load);
            match spawn_run(engine, &dir.join(engine), timeout) {
                Ok(run) => runs.entry(engine).or_default().push(run),
                Err(e) => {
                    eprintln!("   {e}");
                    failures.push(e.to_string());
                }
            }
            let _ = std::fs::remove_dir_all(dir.join(engine));
        }
    }
    loads.push(loadavg());

    // Medians per engine and metric.
    let mut medians: BTreeMap<&str, BTreeMap<String, f64>> = BTreeMap::new();
    for (&engine, list) in &runs {
        let mut keys: Vec<&String> = list.iter().flat_map(|r| r.values.keys()).collect();
        keys.sort();
        keys.dedup();
        let m = medians.entry(engine).or_default();
        for key in keys {
            let mut v: Vec<f64> = list
                .iter()
                .filter_map(|r| r.values.get(key).copied())
                .collect();
            m.insert(key.clone(), median(&mut v));
        }
        if let Some(&b) = build_times.get(engine) {
            m.insert("build_s".into(), b);
        }
    }

    let versions: Vec<(&str, String)> = engines
        .iter()
        .map(|&e| {
            let v = match e {
                "sqlite" => {
                    let sqlite = runs
                        .get("sqlite")
                        .and_then(|r| r.first())
                        .and_then(|r| r.notes.get("sqlite_version").cloned())
                        .unwrap_or_else(|| "?".into());
                    format!(
                        "rusqlite {} (libsqlite3-sys {}, SQLite {sqlite})",
                        locked_version("rusqlite"),
                        locked_version("libsqlite3-sys")
                    )
                }
                "fjall" => format!(
                    "fjall {} (lsm-tree {})",
                    locked_version("fjall"),
                    locked_version("lsm-tree")
                ),
                "redb" => format!("redb {}", locked_version("redb")),
                _ => unreachable!(),
            };
            (e, v)
        })
        .collect();

    // Markdown.
    let cols: Vec<&str> = engines
        .iter()
        .copied()
        .filter(|e| medians.contains_key(e))
        .collect();
    type Fmt = fn(f64) -> String;
    let int: Fmt = |v| group(v.round() as i64);
    let f1: Fmt = |v| format!("{v:.1}");
    let f2: Fmt = |v| format!("{v:.2}");
    let f3: Fmt = |v| format!("{v:.3}");
    let rows: &[(&str, &str, Fmt)] = &[
        ("ingest_rps", "ingest 2,000,000 records: records/s (in the engine)", int),
        ("ingest_s", "ingest: seconds in the engine", f2),
        ("ingest_wall_s", "ingest: seconds wall (with making the records)", f2),
        ("ingest_unsettled_mib", "on disk right after the last commit, MiB", f1),
        ("settle_s", "settle: seconds", f2),
        ("ingest_settled_mib", "on disk settled, MiB", f1),
        ("bytes_per_record", "on disk settled, bytes per record (120 B blob + key)", f1),
        ("ingest_wchar_mib", "written for ingest + settle by write calls, MiB (2,000,000 × 120 B = 229 MiB of blobs)", int),
        ("ingest_write_bytes_mib", "written for ingest + settle towards the disk (/proc/self/io write_bytes), MiB", int),
        ("readstore_write_rps", "read store: write 864,000 records, records/s", int),
        ("readstore_mib", "read store on disk settled, MiB", f1),
        ("read_day_ms", "read one name's day (86,400 rows), ms", f2),
        ("read_day_rows_per_s", "read one name's day, rows/s", int),
        ("read_hour_ms", "read one name's hour (3,600 rows), ms", f3),
        ("compact_s", "read store: full compaction (VACUUM / major_compact / compact), seconds", f2),
        ("readstore_compacted_mib", "read store on disk after it, MiB", f1),
        ("retention_before_mib", "retention: on disk with 2 days (2,000,000 + 100,000), MiB", f1),
        ("delete_ms", "retention: delete the 2,000,000-record day, ms", f2),
        ("after_delete_mib", "retention: on disk right after the delete, MiB", f1),
        ("reclaim_s", "retention: reclaim step, seconds", f3),
        ("after_reclaim_mib", "retention: on disk after the reclaim step, MiB", f1),
        ("peak_rss_mib", "peak resident memory of the run, MiB", f1),
        ("run_s", "whole run, seconds", f1),
        ("build_s", "clean release build with only this engine, seconds", f1),
    ];
    println!("| median of {} rounds | {} |", rounds, cols.join(" | "));
    println!("|---|{}", "---:|".repeat(cols.len()));
    for (key, label, fmt) in rows {
        if !cols.iter().any(|e| medians[e].contains_key(*key)) {
            continue;
        }
        let cells: Vec<String> = cols
            .iter()
            .map(|e| medians[e].get(*key).map_or("–".into(), |&v| fmt(v)))
            .collect();
        println!("| {label} | {} |", cells.join(" | "));
    }
    println!();
    for (e, v) in &versions {
        println!("- {e}: {v}");
    }
    for &e in &cols {
        if let Some(r) = runs[e].last() {
            for (k, v) in &r.notes {
                if k != "sqlite_version" {
                    println!("- {e} {k}: {v}");
                }
            }
        }
    }
    println!(
        "- runs per engine: {}",
        cols.iter()
            .map(|e| format!("{e} {}", runs[e].len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
    println!(
        "- load average before each run, and at the end: {}",
        loads.join(" · ")
    );
    for f in &failures {
        println!("- FAILED: {f}");
    }
    println!();

    // JSON: medians and every round's values.
    let mut json = format!("{{\"bench\":\"engines\",\"rounds\":{rounds},\"versions\":{{");
    json += &versions
        .iter()
        .map(|(e, v)| format!("{}:{}", json_str(e), json_str(v)))
        .collect::<Vec<_>>()
        .join(",");
    json += "},\"median\":{";
    json += &cols
        .iter()
        .map(|e| {
            let fields = medians[e]
                .iter()
                .map(|(k, v)| format!("{}:{}", json_str(k), json_num(*v)))
                .collect::<Vec<_>>();
            format!("{}:{{{}}}", json_str(e), fields.join(","))
        })
        .collect::<Vec<_>>()
        .join(",");
    json += "},\"rounds_raw\":{";
    json += &cols
        .iter()
        .map(|e| {
            let list = runs[e]
                .iter()
                .map(|r| {
                    let f = r
                        .values
                        .iter()
                        .map(|(k, v)| format!("{}:{}", json_str(k), json_num(*v)))
                        .collect::<Vec<_>>();
                    format!("{{{}}}", f.join(","))
                })
                .collect::<Vec<_>>();
            format!("{}:[{}]", json_str(e), list.join(","))
        })
        .collect::<Vec<_>>()
        .join(",");
    json += &format!(
        "}},\"loadavg\":[{}]",
        loads
            .iter()
            .map(|l| json_str(l))
            .collect::<Vec<_>>()
            .join(",")
    );
    json += &format!(
        ",\"failures\":[{}]}}",
        failures
            .iter()
            .map(|f| json_str(f))
            .collect::<Vec<_>>()
            .join(",")
    );
    println!("{json}");
    if !failures.is_empty() {
        return Err(format!("{} run(s) failed", failures.len()).into());
    }
    Ok(())
}

/// 1234567 → "1,234,567".
fn group(v: i64) -> String {
    let s = v.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0 {
        format!("-{out}")
    } else {
        out
    }
}
