//! Reopening, torn tails, corruption and compaction.

use std::fs::{self, OpenOptions};
use std::path::Path;

use herald_info::persist::{HEADER_BYTES, LOG_FILE, SNAPSHOT_FILE, SNAPSHOT_TEMP_FILE};
use herald_info::{
    FsyncPolicy, InfoError, InfoStore, ObjectUpdate, Recovery, StoreOptions, UpdateMode,
};

use crate::{create_run, open_with_types, quick_options, state, types, State};

fn reopen(dir: &Path) -> InfoStore {
    InfoStore::open(dir, quick_options()).unwrap()
}

fn truncate_by(path: &Path, bytes: u64) {
    let file = OpenOptions::new().write(true).open(path).unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(len - bytes).unwrap();
}

fn flip_byte(path: &Path, offset: usize) {
    let mut bytes = fs::read(path).unwrap();
    bytes[offset] ^= 0x55;
    fs::write(path, bytes).unwrap();
}

/// A store with types, three objects, an update and a delete.
fn populated(dir: &Path, options: StoreOptions) -> State {
    let mut store = open_with_types(dir, options);
    create_run(&mut store, "A.one", 1);
    create_run(&mut store, "A.two", 2);
    create_run(&mut store, "A.three", 3);
    let update = ObjectUpdate::new("A.two", 9).with("run", 22);
    store.update(update, UpdateMode::Update).unwrap();
    store.delete("A.three", 10).unwrap();
    state(&store)
}

#[test]
fn reopening_gives_the_same_state() {
    let dir = tempfile::tempdir().unwrap();
    let expected = populated(dir.path(), StoreOptions::default());
    let store = reopen(dir.path());
    assert_eq!(state(&store), expected);
    assert_eq!(store.get("A.two").unwrap().version, 2);
    assert_eq!(
        store.recovery(),
        Recovery {
            snapshot_entries: 0,
            log_entries: 3 + 5,
            torn_tail_bytes: 0
        }
    );
}

#[test]
fn fsync_always_persists_too() {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        fsync: FsyncPolicy::Always,
        ..StoreOptions::default()
    };
    let expected = populated(dir.path(), options);
    let mut store = reopen(dir.path());
    store.sync().unwrap();
    assert_eq!(state(&store), expected);
}

#[test]
fn a_torn_last_entry_loses_only_that_change() {
    let dir = tempfile::tempdir().unwrap();
    let expected = {
        let mut store = open_with_types(dir.path(), quick_options());
        create_run(&mut store, "A.one", 1);
        let kept = state(&store);
        create_run(&mut store, "A.two", 2);
        kept
    };
    truncate_by(&dir.path().join(LOG_FILE), 3);
    let mut store = reopen(dir.path());
    assert_eq!(state(&store), expected);
    assert!(
        store.recovery().torn_tail_bytes > 3,
        "{:?}",
        store.recovery()
    );

    // The log was cut back to whole entries, so new changes survive the next reopen.
    create_run(&mut store, "A.three", 3);
    let expected = state(&store);
    drop(store);
    let store = reopen(dir.path());
    assert_eq!(state(&store), expected);
    assert_eq!(store.recovery().torn_tail_bytes, 0);
}

/// Cutting the log anywhere gives the state after the last whole entry before the cut.
#[test]
fn every_cut_of_the_log_recovers_a_prefix_of_the_changes() {
    let dir = tempfile::tempdir().unwrap();
    let mut prefixes = Vec::new();
    {
        let mut store = InfoStore::open(dir.path(), quick_options()).unwrap();
        prefixes.push((store.log_bytes(), state(&store)));
        for def in types() {
            store.declare_type(def).unwrap();
            prefixes.push((store.log_bytes(), state(&store)));
        }
        for run in 0..4 {
            create_run(&mut store, &format!("A.r{run}"), run);
            prefixes.push((store.log_bytes(), state(&store)));
        }
        store.delete("A.r1", 5).unwrap();
        prefixes.push((store.log_bytes(), state(&store)));
    }
    let log = fs::read(dir.path().join(LOG_FILE)).unwrap();
    for cut in HEADER_BYTES as usize..=log.len() {
        let copy = tempfile::tempdir().unwrap();
        fs::write(copy.path().join(LOG_FILE), &log[..cut]).unwrap();
        let store = reopen(copy.path());
        let (whole, expected) = prefixes
            .iter()
            .rev()
            .find(|(len, _)| *len <= cut as u64)
            .unwrap();
        assert_eq!(&state(&store), expected, "cut at {cut}");
        assert_eq!(store.recovery().torn_tail_bytes, cut as u64 - whole);
    }
}

#[test]
fn a_torn_header_is_rewritten() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join(LOG_FILE), b"HRL").unwrap();
    let mut store = reopen(dir.path());
    assert_eq!(store.recovery().torn_tail_bytes, 3);
    store.declare_type(types()[0].clone()).unwrap();
    drop(store);
    assert_eq!(reopen(dir.path()).types().len(), 1);
}

#[test]
fn corruption_before_the_last_entry_names_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    populated(dir.path(), quick_options());
    let log = dir.path().join(LOG_FILE);
    flip_byte(&log, HEADER_BYTES as usize + 6);
    let err = InfoStore::open(dir.path(), quick_options()).unwrap_err();
    let InfoError::Corrupt { path, offset, .. } = &err else {
        panic!("{err}");
    };
    assert_eq!((path.as_path(), *offset), (log.as_path(), HEADER_BYTES));
    assert!(err.to_string().contains("fails its checksum"), "{err}");

    fs::write(&log, b"GARBAGE!and more").unwrap();
    let err = InfoStore::open(dir.path(), quick_options()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("at byte 0: not a Herald info log (the header is wrong)"),
        "{err}"
    );
}

#[test]
fn compaction_keeps_the_state_and_empties_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let expected = populated(dir.path(), quick_options());
    let mut store = reopen(dir.path());
    store.compact().unwrap();
    assert_eq!(store.log_bytes(), HEADER_BYTES);
    assert_eq!(state(&store), expected);
    drop(store);
    let mut store = reopen(dir.path());
    assert_eq!(state(&store), expected);
    assert_eq!(store.recovery().snapshot_entries, 3 + 2);
    assert_eq!(store.recovery().log_entries, 0);

    // Changes after a compaction land in the log, on top of the snapshot.
    store.delete("A.one", 20).unwrap();
    let expected = state(&store);
    drop(store);
    assert_eq!(state(&reopen(dir.path())), expected);
}

#[test]
fn the_count_of_bytes_written_grows_with_every_change_and_survives_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open_with_types(dir.path(), quick_options());
    let before = store.log_appended();
    create_run(&mut store, "A.one", 1);
    let after_one = store.log_appended();
    assert!(after_one > before);
    store.compact().unwrap();
    assert_eq!(
        store.log_appended(),
        after_one,
        "compaction wrote no change"
    );
    // The log is back to its header: a change of the same size leaves the log as long as
    // it was before, and the count still tells it apart.
    create_run(&mut store, "A.two", 2);
    assert!(store.log_appended() > after_one);
}

#[test]
fn compaction_runs_by_itself_past_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let options = StoreOptions {
        compact_after_bytes: 300,
        ..quick_options()
    };
    let mut store = open_with_types(dir.path(), options.clone());
    for run in 0..50 {
        create_run(&mut store, &format!("A.r{run:02}"), run);
        assert!(store.log_bytes() <= 300 + 100, "log {}", store.log_bytes());
    }
    assert!(store.take_compaction_error().is_none());
    let expected = state(&store);
    drop(store);
    let store = InfoStore::open(dir.path(), options).unwrap();
    assert_eq!(state(&store), expected);
    assert!(store.recovery().snapshot_entries > 0);
}

/// A crash after the snapshot's rename but before the log's truncation leaves the old log,
/// which replays over the new snapshot to the same state.
#[test]
fn a_crash_between_snapshot_and_log_truncation_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let expected = populated(dir.path(), quick_options());
    let log = dir.path().join(LOG_FILE);
    let old_log = fs::read(&log).unwrap();
    reopen(dir.path()).compact().unwrap();
    fs::write(&log, old_log).unwrap();
    let store = reopen(dir.path());
    assert_eq!(state(&store), expected);
    assert!(store.recovery().log_entries > 0 && store.recovery().snapshot_entries > 0);
}

#[test]
fn a_damaged_snapshot_is_corrupt_and_a_stale_temp_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    populated(dir.path(), quick_options());
    reopen(dir.path()).compact().unwrap();
    fs::write(dir.path().join(SNAPSHOT_TEMP_FILE), b"half written").unwrap();
    let expected = state(&reopen(dir.path()));
    assert!(!dir.path().join(SNAPSHOT_TEMP_FILE).exists());
    assert_eq!(expected.objects.len(), 2);

    let snapshot = dir.path().join(SNAPSHOT_FILE);
    truncate_by(&snapshot, 2);
    let err = InfoStore::open(dir.path(), quick_options()).unwrap_err();
    assert!(
        matches!(&err, InfoError::Corrupt { path, .. } if *path == snapshot),
        "{err}"
    );
    assert!(err.to_string().contains("incomplete or damaged"), "{err}");
}

#[test]
fn an_object_whose_type_is_missing_is_corrupt() {
    let dir = tempfile::tempdir().unwrap();
    {
        let mut store = open_with_types(dir.path(), quick_options());
        create_run(&mut store, "A.one", 1);
    }
    // Drop the three declarations from the log, keeping the object.
    let log = dir.path().join(LOG_FILE);
    let bytes = fs::read(&log).unwrap();
    let mut offset = HEADER_BYTES as usize;
    for _ in 0..3 {
        let len = u32::from_be_bytes(bytes[offset..offset + 4].try_into().unwrap()) as usize;
        offset += len + 8;
    }
    let mut cut = bytes[..HEADER_BYTES as usize].to_vec();
    cut.extend_from_slice(&bytes[offset..]);
    fs::write(&log, cut).unwrap();
    let err = InfoStore::open(dir.path(), quick_options()).unwrap_err();
    assert!(
        err.to_string()
            .ends_with("at byte 8: object `A.one` has undeclared type `Run`"),
        "{err}"
    );
}

/// Environment variable that turns [`sigkill_child`] into the child of
/// [`an_acknowledged_change_survives_sigkill`]: the store directory to write to.
const CHILD_DIR_VAR: &str = "HERALD_INFO_SIGKILL_CHILD_DIR";

/// Run as a child process: makes 50 changes, never fsyncing, says so, and waits to be killed.
#[test]
fn sigkill_child() {
    let Some(dir) = std::env::var_os(CHILD_DIR_VAR) else {
        return;
    };
    let mut store = open_with_types(Path::new(&dir), quick_options());
    for run in 0..50 {
        create_run(&mut store, &format!("A.r{run:02}"), run);
    }
    println!("acknowledged");
    std::thread::sleep(std::time::Duration::from_secs(60));
}

/// A change is written to the log before the call returns, so killing the process with
/// SIGKILL right after the acknowledgement loses nothing, even with fsync off.
#[test]
fn an_acknowledged_change_survives_sigkill() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};

    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "persistence::sigkill_child", "--nocapture"])
        .env(CHILD_DIR_VAR, dir.path())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let acknowledged = stdout
        .lines()
        .map_while(Result::ok)
        .any(|line| line.contains("acknowledged"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(acknowledged, "the child process did not finish its changes");
    let store = reopen(dir.path());
    assert_eq!(store.len(), 50);
    assert_eq!(store.recovery().torn_tail_bytes, 0);
}

#[test]
fn a_copy_of_an_undeclared_type_is_refused_and_the_store_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open_with_types(dir.path(), quick_options());
    let mut copy = create_run(&mut store, "RC.run", 7);
    copy.name = "W.st1".into();
    copy.type_name = "Weather".into();
    // Kept, it would make the log unreadable: an object of a type the store never heard of.
    let refused = store.put_copy(copy).unwrap_err();
    assert!(
        matches!(&refused, InfoError::UnknownType { name } if name == "Weather"),
        "{refused}"
    );
    let before = state(&store);
    drop(store);
    assert_eq!(state(&reopen(dir.path())), before);
}
