//! The conformance suite on the block store, and what only it does: repair after a crash,
//! hour-granular retention, skipping blocks by their headers.

use std::sync::Arc;

use herald_archive::conformance::Harness;
use herald_archive::{Backend, BlockStore};

struct Blocks(tempfile::TempDir);

impl Harness for Blocks {
    fn open(&self) -> Arc<dyn Backend> {
        Arc::new(BlockStore::open(self.0.path()).expect("the store opens"))
    }
}

fn harness() -> Blocks {
    Blocks(tempfile::tempdir().expect("a temporary directory"))
}

herald_archive::conformance_tests!(harness());

mod only_blocks {
    use std::io::Write;

    use herald_archive::blockstore::layout::HOUR_NANOS;
    use herald_archive::conformance::{all_samples, entry, entry_of, BASE, LONG, SECOND};
    use herald_archive::query::{self, Budget};
    use herald_archive::{migrate, Backend, BlockStore, EmbeddedBackend, Entry, Keep};
    use herald_proto::archive::{
        ArchiveReply, ArchiveRequest, AtQuery, BucketQuery, LogQuery, SampleQuery,
    };
    use herald_proto::{Kind, Origin, Priority, PrioritySet, Record, Value};

    fn reading(v: i64) -> Vec<(String, Value)> {
        vec![("value".to_string(), Value::Int(v))]
    }

    /// A crash leaves a half-written block: the next start cuts it, says so, and everything
    /// before it reads back; what the last sync put in the store's log (a block still
    /// open) is put back.
    #[test]
    fn a_torn_tail_left_by_a_crash_is_cut_at_the_next_start_and_reported() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlockStore::open(dir.path()).unwrap();
        let name = "ANTENNA.DV01.Torn";
        let entries: Vec<Entry> = (0..100)
            .map(|i| entry(Kind::Info, name, BASE + i * SECOND, reading(i), LONG))
            .collect();
        store.write(&entries).unwrap();
        // Synced into the log: the block stays open, the segment file holds its header.
        store.sync().unwrap();
        let file = store.root().join("36500d/2026-11-20/00.samples.seg");
        let whole = std::fs::metadata(&file).unwrap().len();
        assert_eq!(whole, 16);
        // The process dies (no clean close) while appending a block: half of it is there.
        store.abandon();
        let mut torn = std::fs::OpenOptions::new()
            .append(true)
            .open(&file)
            .unwrap();
        torn.write_all(&[0x48, 0x42, 0x4c, 0x4b, 1, 0, 16, 0, 9, 9, 9])
            .unwrap();
        drop(torn);
        let store = BlockStore::open(dir.path()).unwrap();
        let repairs = store.repairs();
        assert_eq!(repairs.len(), 1, "{repairs:?}");
        assert_eq!(
            (repairs[0].repair.cut_bytes, repairs[0].repair.kept_bytes),
            (11, whole)
        );
        let recovery = store.recovery();
        assert!(recovery.unclean);
        assert_eq!((recovery.files_cut, recovery.bytes_cut), (1, 11));
        assert_eq!(recovery.replayed, 100);
        // Put back, and written into the file as a block at once.
        assert!(std::fs::metadata(&file).unwrap().len() > whole);
        assert_eq!(
            all_samples(&store, name, BASE, BASE + 200 * SECOND, 1000).len(),
            100
        );
        // One writer at a time; readers beside it.
        let second = BlockStore::open(dir.path()).unwrap_err();
        assert!(
            second.to_string().contains("in use by another process"),
            "{second}"
        );
        let reader = BlockStore::open_read_only(dir.path());
        assert_eq!(
            all_samples(&reader, name, BASE, BASE + 200 * SECOND, 1000).len(),
            100
        );
        assert!(reader.write(&entries).is_err());
        drop(reader);
        // A clean close leaves nothing to repair or put back, and nothing twice.
        drop(store);
        let store = BlockStore::open(dir.path()).unwrap();
        assert!(store.repairs().is_empty());
        assert_eq!(store.recovery(), Default::default());
        assert_eq!(
            all_samples(&store, name, BASE, BASE + 200 * SECOND, 1000).len(),
            100
        );
    }

    /// Retention deletes whole hour files, not whole days.
    #[test]
    fn retention_removes_whole_hours() {
        let dir = tempfile::tempdir().unwrap();
        let store = BlockStore::open(dir.path()).unwrap();
        let name = "ANTENNA.DV01.Hourly";
        let hour = Keep::seconds(3600);
        let at = |h: i64| {
            entry(
                Kind::Info,
                name,
                BASE + h * HOUR_NANOS + SECOND,
                reading(h),
                hour,
            )
        };
        store.write(&[at(0), at(1), at(2)]).unwrap();
        // Hour 0 ends at BASE + 1 h and is kept one hour more.
        store.expire(BASE + 2 * HOUR_NANOS).unwrap();
        let left = all_samples(&store, name, BASE, BASE + 3 * HOUR_NANOS, 100);
        assert_eq!(left.len(), 2);
        let day = dir.path().join("1h/2026-11-20");
        assert!(!day.join("00.samples.seg").exists());
        assert!(day.join("01.samples.seg").exists());
    }

    /// Records of a realistic mix: samples of many names, logs of many subjects, hosts and
    /// priorities, one in ten up to an hour late, over two days, in two retention classes.
    fn mix() -> Vec<Entry> {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let priorities = [
            Priority::Debug,
            Priority::Info,
            Priority::Warning,
            Priority::Error,
        ];
        let mut entries = Vec::new();
        for n in 0..6_000i64 {
            let r = next();
            let late = if r % 10 == 0 {
                (r >> 8) as i64 % HOUR_NANOS
            } else {
                0
            };
            let time = BASE + n * 29 * SECOND - late;
            let record = if r % 3 == 0 {
                Record {
                    time,
                    priority: priorities[(r >> 20) as usize % 4],
                    text: format!("axis step {} of the drive", r % 1000),
                    origin: Origin {
                        host: format!("dv{:02}-lcu", r % 7),
                        ..Origin::default()
                    },
                    ..Record::new(Kind::Log, format!("ANTENNA.DV{:02}.Mount", (r >> 4) % 12))
                }
            } else {
                Record {
                    time,
                    fields: reading((r % 10_000) as i64),
                    ..Record::new(Kind::Info, format!("WEATHER.Station{}.temp", (r >> 4) % 20))
                }
            };
            let keep = if r % 5 == 0 { Keep::days(30) } else { LONG };
            entries.push(entry_of(&record, keep));
        }
        entries
    }

    /// Every kind of question over [`mix`]'s data: samples whole and in pages, buckets,
    /// values at an instant, logs with filters.
    fn questions() -> Vec<ArchiveRequest> {
        let day = 86_400 * SECOND;
        let mut requests = Vec::new();
        for name in [
            "WEATHER.Station3.temp",
            "WEATHER.Station17.temp",
            "NOT.THERE",
        ] {
            for (from, to, limit) in [
                (BASE, BASE + 2 * day, 100_000),
                (BASE + 3_000 * SECOND, BASE + day + 7, 37),
            ] {
                requests.push(ArchiveRequest::Samples(SampleQuery {
                    name: name.into(),
                    from,
                    to,
                    after: None,
                    limit,
                }));
            }
            requests.push(ArchiveRequest::Buckets(BucketQuery {
                name: name.into(),
                from: BASE,
                to: BASE + 2 * day,
                buckets: 48,
                field: None,
            }));
        }
        requests.push(ArchiveRequest::At(AtQuery {
            names: (0..20)
                .map(|n| format!("WEATHER.Station{n}.temp"))
                .collect(),
            time: BASE + day + 12_345 * SECOND,
        }));
        for (subject, host, text, priorities) in [
            (None, None, None, PrioritySet::ALL),
            (
                Some("ANTENNA.DV0*.Mount"),
                None,
                None,
                PrioritySet::at_least(Priority::Warning),
            ),
            (None, Some("dv03-lcu"), Some("step 42"), PrioritySet::ALL),
        ] {
            requests.push(ArchiveRequest::Logs(LogQuery {
                from: BASE + 1_000 * SECOND,
                to: BASE + 2 * day,
                priorities,
                subject: subject.map(Into::into),
                host: host.map(Into::into),
                text: text.map(Into::into),
                limit: 500,
                ..LogQuery::default()
            }));
        }
        requests
    }

    /// Asks both stores every question; the answers must be equal, and all but the three
    /// about a name never written must find something.
    fn same_answers(want_from: &dyn Backend, got_from: &dyn Backend) {
        let requests = questions();
        let mut answered = 0;
        for request in &requests {
            let budget = Budget::records(usize::MAX);
            let want = query::answer(want_from, request, budget).expect("answers");
            let got = query::answer(got_from, request, budget).expect("answers");
            assert_eq!(got, want, "{request:?}");
            answered += usize::from(match &want.reply {
                ArchiveReply::Page(page) => !page.records.is_empty(),
                ArchiveReply::Buckets(buckets) => buckets.iter().any(|b| b.count > 0),
                ArchiveReply::At(values) => values.iter().all(Option::is_some),
            });
        }
        assert_eq!(answered, requests.len() - 3);
    }

    /// The same data written to the SQLite store and the block store: every kind of query
    /// answers the same from both.
    #[test]
    fn queries_answer_as_the_sqlite_store_does_on_the_same_data() {
        let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let sqlite = EmbeddedBackend::open(dirs.0.path());
        let blocks = BlockStore::open(dirs.1.path()).unwrap();
        for chunk in mix().chunks(700) {
            sqlite.write(chunk).unwrap();
            // As the server writes: its records passed its decoder's checks.
            blocks.write_checked(chunk).unwrap();
        }
        same_answers(&sqlite, &blocks);
    }

    /// Records written as checked (the server's) are not checked again when read; a block
    /// that also got a record of unknown standing is checked whole when read, so a bad
    /// record in it is still left out and counted — before and after its block is closed.
    #[test]
    fn rows_say_whether_their_records_passed_the_checks_when_written() {
        use herald_archive::conformance::poisoned;
        use herald_archive::{RowRange, Source};
        let dir = tempfile::tempdir().unwrap();
        let read = |store: &BlockStore, name: &str| {
            let range = RowRange {
                from: BASE,
                to: BASE + HOUR_NANOS,
                after: None,
                priorities: PrioritySet::ALL,
            };
            let read = query::read_rows(
                store,
                Source::Samples(name),
                &range,
                Budget::records(1_000),
                |_| Ok(true),
            )
            .unwrap();
            let checked: Vec<bool> = read.rows.iter().map(|row| row.checked).collect();
            (checked, read.skipped)
        };
        let (clean, mixed) = ("ANTENNA.DV01.Clean", "ANTENNA.DV01.Mixed");
        let of = |name: &str, i: i64, v: i64| {
            entry(Kind::Info, name, BASE + i * SECOND, reading(v), LONG)
        };
        let store = BlockStore::open(dir.path()).unwrap();
        store
            .write_checked(&(0..5).map(|i| of(clean, i, i)).collect::<Vec<_>>())
            .unwrap();
        store
            .write_checked(&(0..5).map(|i| of(mixed, i, i)).collect::<Vec<_>>())
            .unwrap();
        store.write(&[poisoned(of(mixed, 9, i64::MIN))]).unwrap();
        assert_eq!(read(&store, clean), (vec![true; 5], 0));
        assert_eq!(read(&store, mixed), (vec![false; 5], 1));
        // Closed: the open blocks go into the file, their headers saying as much.
        drop(store);
        let store = BlockStore::open(dir.path()).unwrap();
        assert_eq!(read(&store, clean), (vec![true; 5], 0));
        assert_eq!(read(&store, mixed), (vec![false; 5], 1));
    }

    /// `herald archive migrate`'s work: an SQLite archive moved into the block store
    /// answers every question as before.
    #[test]
    fn a_migrated_archive_answers_as_before() {
        let dirs = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let sqlite = EmbeddedBackend::open(dirs.0.path());
        for chunk in mix().chunks(700) {
            sqlite.write(chunk).unwrap();
        }
        sqlite.sync().unwrap();
        let blocks = BlockStore::open(dirs.1.path()).unwrap();
        let mut days = Vec::new();
        let moved = migrate::migrate(dirs.0.path(), &blocks, &mut |done| {
            days.push((done.day.clone(), done.done, done.total));
        })
        .unwrap();
        assert_eq!((moved.records, moved.unreadable), (6_000, 0));
        assert_eq!(days.len() as u64, moved.days);
        assert!(
            days.iter().any(|(day, _, _)| day == "2026-11-21 (30d)"),
            "{days:?}"
        );
        same_answers(&sqlite, &blocks);
    }
}
