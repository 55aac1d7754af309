//! rusqlite (bundled SQLite): one database file per day, WAL, synchronous=NORMAL.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection};

use super::{Engine, ReadSum, Result};
use crate::workload::Rec;

const INSERT: &str = "INSERT INTO samples (name, time, seq, record) VALUES (?1, ?2, ?3, ?4)";
const SELECT: &str = "SELECT time, record FROM samples \
                      WHERE name = ?1 AND time >= ?2 AND time < ?3 ORDER BY time, seq";

pub struct Sqlite {
    dir: PathBuf,
    days: BTreeMap<String, Connection>,
}

impl Sqlite {
    fn file(&self, day: &str) -> PathBuf {
        self.dir.join(format!("{day}.sqlite"))
    }

    fn conn(&mut self, day: &str) -> Result<&mut Connection> {
        if !self.days.contains_key(day) {
            let conn = Connection::open(self.file(day))?;
            let mode: String = conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))?;
            assert_eq!(mode.to_ascii_lowercase(), "wal");
            if let Ok(pragmas) = std::env::var("HERALD_BENCH_SQLITE_PRAGMAS") {
                // For side experiments only (e.g. "cache_size=-65536;wal_autocheckpoint=10000");
                // the table in docs/benchmarks.md uses SQLite's defaults besides the two above.
                for p in pragmas.split(';').filter(|p| !p.trim().is_empty()) {
                    conn.query_row(&format!("PRAGMA {p}"), [], |_| Ok(()))
                        .or_else(|e| match e {
                            rusqlite::Error::QueryReturnedNoRows => Ok(()),
                            e => Err(e),
                        })?;
                }
            }
            conn.execute_batch(
                "PRAGMA synchronous=NORMAL;
                 CREATE TABLE IF NOT EXISTS samples (
                     name TEXT, time INTEGER, seq INTEGER, record BLOB,
                     PRIMARY KEY (name, time, seq)) WITHOUT ROWID;",
            )?;
            self.days.insert(day.to_owned(), conn);
        }
        Ok(self.days.get_mut(day).expect("just opened"))
    }
}

impl Engine for Sqlite {
    fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        Ok(Sqlite {
            dir: dir.to_owned(),
            days: BTreeMap::new(),
        })
    }

    fn write_batch(&mut self, names: &[String], day: &str, recs: &[Rec]) -> Result<()> {
        let conn = self.conn(day)?;
        let tx = conn.transaction()?;
        {
            let mut insert = tx.prepare_cached(INSERT)?;
            for r in recs {
                insert.execute(params![names[r.name], r.time, r.seq as i64, &r.blob[..]])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn settle(&mut self) -> Result<String> {
        for conn in self.days.values() {
            conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))?;
        }
        Ok("PRAGMA wal_checkpoint(TRUNCATE) on each day's file".into())
    }

    fn reopen(&mut self) -> Result<()> {
        let days: Vec<String> = self.days.keys().cloned().collect();
        self.days.clear();
        for day in days {
            self.conn(&day)?;
        }
        Ok(())
    }

    fn read(&mut self, day: &str, name: &str, t0: i64, t1: i64) -> Result<ReadSum> {
        let conn = self.conn(day)?;
        let mut select = conn.prepare_cached(SELECT)?;
        let mut rows = select.query(params![name, t0, t1])?;
        let mut sum = ReadSum::default();
        let mut last = i64::MIN;
        while let Some(row) = rows.next()? {
            let time: i64 = row.get(0)?;
            sum.add(&mut last, time, row.get_ref(1)?.as_blob()?);
        }
        Ok(sum)
    }

    fn delete_day(&mut self, day: &str) -> Result<()> {
        if let Some(conn) = self.days.remove(day) {
            conn.close().map_err(|(_, e)| e)?;
        }
        let file = self.file(day);
        for suffix in ["", "-wal", "-shm"] {
            let mut path = file.clone().into_os_string();
            path.push(suffix);
            match std::fs::remove_file(&path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                other => other?,
            }
        }
        Ok(())
    }

    fn reclaim(&mut self) -> Result<String> {
        Ok("nothing: the day's file is gone".into())
    }

    fn compact(&mut self) -> Result<String> {
        for conn in self.days.values() {
            conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")?;
        }
        Ok("VACUUM, then PRAGMA wal_checkpoint(TRUNCATE)".into())
    }
}
