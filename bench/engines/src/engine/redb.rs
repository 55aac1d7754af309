//! redb 2.x: one file, one table per day, byte keys, default durability (Immediate).

use std::path::{Path, PathBuf};

use redb::{Database, TableDefinition};

use super::{Engine, ReadSum, Result};
use crate::workload::{encode_key, key_time, Rec};

pub struct Redb {
    file: PathBuf,
    db: Option<Database>,
    key: Vec<u8>,
}

fn table(day: &str) -> TableDefinition<'_, &'static [u8], &'static [u8]> {
    TableDefinition::new(day)
}

impl Redb {
    fn db(&self) -> &Database {
        self.db.as_ref().expect("open")
    }
}

impl Engine for Redb {
    fn open(dir: &Path) -> Result<Self> {
        std::fs::create_dir_all(dir)?;
        let file = dir.join("archive.redb");
        let db = Database::create(&file)?;
        Ok(Redb {
            file,
            db: Some(db),
            key: Vec::with_capacity(64),
        })
    }

    fn write_batch(&mut self, names: &[String], day: &str, recs: &[Rec]) -> Result<()> {
        let tx = self.db.as_ref().expect("open").begin_write()?;
        {
            let mut t = tx.open_table(table(day))?;
            for r in recs {
                encode_key(&mut self.key, &names[r.name], r.time, r.seq);
                t.insert(self.key.as_slice(), &r.blob[..])?;
            }
        }
        tx.commit()?;
        Ok(())
    }

    fn settle(&mut self) -> Result<String> {
        Ok("nothing to wait for (no background work)".into())
    }

    fn reopen(&mut self) -> Result<()> {
        self.db = None;
        self.db = Some(Database::create(&self.file)?);
        Ok(())
    }

    fn read(&mut self, day: &str, name: &str, t0: i64, t1: i64) -> Result<ReadSum> {
        let tx = self.db().begin_read()?;
        let t = tx.open_table(table(day))?;
        let mut start = Vec::new();
        let mut end = Vec::new();
        encode_key(&mut start, name, t0, 0);
        encode_key(&mut end, name, t1, 0);
        let mut sum = ReadSum::default();
        let mut last = i64::MIN;
        for kv in t.range(start.as_slice()..end.as_slice())? {
            let (key, value) = kv?;
            sum.add(&mut last, key_time(key.value()), value.value());
        }
        Ok(sum)
    }

    fn delete_day(&mut self, day: &str) -> Result<()> {
        let tx = self.db().begin_write()?;
        assert!(tx.delete_table(table(day))?, "table existed");
        tx.commit()?;
        Ok(())
    }

    fn reclaim(&mut self) -> Result<String> {
        self.compact()
    }

    fn compact(&mut self) -> Result<String> {
        // One call can leave the file larger than the next call makes it: call until it says
        // nothing more was possible.
        let mut sizes = Vec::new();
        while sizes.len() < 10 {
            let compacted = self.db.as_mut().expect("open").compact()?;
            sizes.push(std::fs::metadata(&self.file)?.len() as f64 / (1024.0 * 1024.0));
            if !compacted {
                break;
            }
        }
        let sizes: Vec<String> = sizes.iter().map(|s| format!("{s:.1}")).collect();
        Ok(format!(
            "Database::compact() until it returned false: {} calls, file MiB after each: {}",
            sizes.len(),
            sizes.join(" → ")
        ))
    }
}
