//! The conformance suite on the embedded SQLite store.

use std::sync::Arc;

use herald_archive::conformance::Harness;
use herald_archive::{Backend, EmbeddedBackend};

struct Embedded(tempfile::TempDir);

impl Harness for Embedded {
    fn open(&self) -> Arc<dyn Backend> {
        Arc::new(EmbeddedBackend::open(self.0.path()))
    }
}

fn harness() -> Embedded {
    Embedded(tempfile::tempdir().expect("a temporary directory"))
}

herald_archive::conformance_tests!(harness());

/// The writer creates a day's file before its tables: a query landing in between finds no
/// data (not an error), and does not keep a connection that would miss the tables later.
#[test]
fn a_day_file_read_before_its_tables_exist_hides_nothing_written_later() {
    use herald_archive::conformance::{all_samples, entry, BASE, LONG, SECOND};
    use herald_archive::embedded::layout::slot_path;
    use herald_archive::entry::day_of;
    use herald_archive::Slot;
    use herald_proto::Kind;

    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = EmbeddedBackend::open(dir.path());
    let path = slot_path(
        dir.path(),
        Slot {
            day: day_of(BASE),
            keep: LONG,
        },
    );
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, b"").unwrap();
    assert!(all_samples(&store, "A.b", BASE, BASE + SECOND, 10).is_empty());
    store
        .write(&[entry(Kind::Info, "A.b", BASE, Vec::new(), LONG)])
        .unwrap();
    assert_eq!(all_samples(&store, "A.b", BASE, BASE + SECOND, 10).len(), 1);
}

/// Records spread over many days open many day files: the writers share one page-cache
/// budget and the idle readers are bounded in all, so memory does not grow with the spread.
#[test]
fn records_spread_over_many_days_keep_the_open_files_and_their_cache_bounded() {
    use herald_archive::conformance::{all_samples, entry, BASE, LONG};
    use herald_archive::entry::DAY_NANOS;
    use herald_proto::Kind;

    const MIB: u64 = 1024 * 1024;
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = EmbeddedBackend::open(dir.path());
    store
        .write(&[entry(Kind::Info, "A.b", BASE, Vec::new(), LONG)])
        .unwrap();
    let one = store.open_files().unwrap();
    assert_eq!((one.writers, one.writer_cache_bytes), (1, 64 * MIB));

    let days = 40;
    for day in 1..days {
        let time = BASE + day * DAY_NANOS;
        store
            .write(&[entry(Kind::Info, "A.b", time, Vec::new(), LONG)])
            .unwrap();
        let open = store.open_files().unwrap();
        assert!(open.writers <= 16, "{open:?}");
        assert!(
            open.writer_cache_bytes <= 64 * MIB,
            "{open:?} after day {day}"
        );
    }
    assert_eq!(store.open_files().unwrap().writers, 16);

    let found = all_samples(&store, "A.b", BASE, BASE + days * DAY_NANOS, 1000);
    assert_eq!(found.len(), usize::try_from(days).unwrap());
    let open = store.open_files().unwrap();
    assert!(open.idle_readers <= 16, "{open:?}");
    assert!(open.idle_readers > 0, "{open:?}");
}
