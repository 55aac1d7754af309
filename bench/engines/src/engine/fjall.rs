//! fjall 2.x: one keyspace, one partition per day, byte keys.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use fjall::{Config, Keyspace, PartitionCreateOptions, PartitionHandle, PersistMode};

use super::{Engine, ReadSum, Result};
use crate::workload::{encode_key, key_time, Rec};

pub struct Fjall {
    dir: PathBuf,
    keyspace: Option<Keyspace>,
    days: BTreeMap<String, PartitionHandle>,
    key: Vec<u8>,
    deleted: Vec<PathBuf>,
}

impl Fjall {
    fn keyspace(&self) -> &Keyspace {
        self.keyspace.as_ref().expect("open")
    }

    fn partition(&mut self, day: &str) -> Result<PartitionHandle> {
        if let Some(p) = self.days.get(day) {
            return Ok(p.clone());
        }
        let p = self
            .keyspace()
            .open_partition(day, PartitionCreateOptions::default())?;
        self.days.insert(day.to_owned(), p.clone());
        Ok(p)
    }

    /// Waits until no flush or compaction has run for 300 ms (at most `limit`).
    fn wait_quiet(&self, limit: Duration) -> bool {
        let ks = self.keyspace();
        let start = Instant::now();
        let mut quiet_since = Instant::now();
        let mut last = (ks.flushes_completed(), ks.compactions_completed());
        while start.elapsed() < limit {
            std::thread::sleep(Duration::from_millis(20));
            let now = (ks.flushes_completed(), ks.compactions_completed());
            if now != last || ks.active_compactions() > 0 {
                last = now;
                quiet_since = Instant::now();
            } else if quiet_since.elapsed() >= Duration::from_millis(300) {
                return true;
            }
        }
        false
    }
}

impl Engine for Fjall {
    fn open(dir: &Path) -> Result<Self> {
        let keyspace = Config::new(dir).open()?;
        Ok(Fjall {
            dir: dir.to_owned(),
            keyspace: Some(keyspace),
            days: BTreeMap::new(),
            key: Vec::with_capacity(64),
            deleted: Vec::new(),
        })
    }

    fn write_batch(&mut self, names: &[String], day: &str, recs: &[Rec]) -> Result<()> {
        let partition = self.partition(day)?;
        // The batch is one atomic journal write; with durability set, commit() then fsyncs
        // the journal (fdatasync) before it returns.
        let mut batch = self
            .keyspace()
            .batch()
            .durability(Some(PersistMode::SyncData));
        for r in recs {
            encode_key(&mut self.key, &names[r.name], r.time, r.seq);
            batch.insert(&partition, self.key.as_slice(), &r.blob[..]);
        }
        batch.commit()?;
        Ok(())
    }

    fn settle(&mut self) -> Result<String> {
        // Write each day's memtable out as a segment (so the journal can go), then let the
        // compaction worker finish what that started.
        for p in self.days.values() {
            p.rotate_memtable_and_wait()?;
        }
        let quiet = self.wait_quiet(Duration::from_secs(30));
        let segments: usize = self.days.values().map(PartitionHandle::segment_count).sum();
        Ok(format!(
            "rotate_memtable_and_wait per partition, then waited for no flush/compaction for 300 ms{}; {} segments, {} journals",
            if quiet { "" } else { " (gave up after 30 s)" },
            segments,
            self.keyspace().journal_count()
        ))
    }

    fn reopen(&mut self) -> Result<()> {
        let days: Vec<String> = self.days.keys().cloned().collect();
        self.days.clear();
        self.keyspace = None;
        self.keyspace = Some(Config::new(&self.dir).open()?);
        for day in days {
            self.partition(&day)?;
        }
        Ok(())
    }

    fn read(&mut self, day: &str, name: &str, t0: i64, t1: i64) -> Result<ReadSum> {
        let partition = self.partition(day)?;
        let mut start = Vec::new();
        let mut end = Vec::new();
        encode_key(&mut start, name, t0, 0);
        encode_key(&mut end, name, t1, 0);
        let mut sum = ReadSum::default();
        let mut last = i64::MIN;
        for kv in partition.range(start..end) {
            let (key, value) = kv?;
            sum.add(&mut last, key_time(&key), &value);
        }
        Ok(sum)
    }

    fn delete_day(&mut self, day: &str) -> Result<()> {
        let handle = self.days.remove(day).expect("day exists");
        self.deleted.push(handle.path().to_owned());
        self.keyspace().delete_partition(handle)?;
        Ok(())
    }

    fn compact(&mut self) -> Result<String> {
        for p in self.days.values() {
            p.rotate_memtable_and_wait()?;
            p.major_compact()?;
        }
        self.wait_quiet(Duration::from_secs(30));
        let segments: usize = self.days.values().map(PartitionHandle::segment_count).sum();
        Ok(format!(
            "major_compact() per partition: {segments} segments"
        ))
    }

    fn reclaim(&mut self) -> Result<String> {
        // The partition's folder goes when the last handle to it is dropped (delete_partition
        // took ours); wait for that.
        let start = Instant::now();
        while self.deleted.iter().any(|p| p.exists()) && start.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let gone = !self.deleted.iter().any(|p| p.exists());
        Ok(format!(
            "waited for the partition folder to go: {}",
            if gone {
                "gone"
            } else {
                "still there after 30 s"
            }
        ))
    }
}
