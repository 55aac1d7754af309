//! Making room in a full disk buffer, lowest priority first (as the Python client does):
//! if the lowest priority on disk is at most the lowest in the batch, the oldest segments
//! holding that priority are rewritten without its oldest records (at least 1/64 of the
//! quota freed at once, so that appends do not rewrite at every batch); otherwise the
//! batch's records of its lowest priority are dropped, oldest first, as many as needed.
//! Every record lost so is counted (`disk_quota`).

use super::segment::{slot, HEADER_BYTES, PRIORITY_SLOTS};
use super::{DiskLoss, Spool};

/// Shedding frees at least `quota / SHED_FRACTION` bytes at once.
const SHED_FRACTION: u64 = 64;

impl Spool {
    /// Makes room for `incoming` (priority, record): returns which of them may be written.
    pub(super) fn room_for(&mut self, incoming: &[(u8, Vec<u8>)]) -> Vec<bool> {
        let size = |record: &Vec<u8>| HEADER_BYTES + record.len() as u64;
        let mut keep = vec![true; incoming.len()];
        let mut need: u64 = incoming.iter().map(|(_, r)| size(r)).sum();
        while need > 0 && self.used_bytes() + need > self.quota {
            let lowest_new = incoming
                .iter()
                .zip(&keep)
                .filter(|(_, kept)| **kept)
                .map(|((p, _), _)| slot(*p))
                .min()
                .expect("need > 0: something is kept");
            if let Some(lowest_disk) = self.lowest_on_disk() {
                if lowest_disk <= lowest_new {
                    let over = self.used_bytes() + need - self.quota;
                    if self.shed(lowest_disk, over.max(self.quota / SHED_FRACTION)) > 0 {
                        continue;
                    }
                }
            }
            // Nothing on disk ranks below the newcomers' lowest: those go, oldest first.
            for (i, (priority, record)) in incoming.iter().enumerate() {
                if self.used_bytes() + need <= self.quota {
                    break;
                }
                if keep[i] && slot(*priority) == lowest_new {
                    keep[i] = false;
                    self.lose(*priority, DiskLoss::Quota, 1);
                    need -= size(record);
                }
            }
        }
        keep
    }

    /// Makes room for a record of `bytes` at `priority` that is yet to be made (a drop
    /// report, which must say what making room for it shed).
    /// Sheds only from disk, and only priorities up to `priority`: nothing is counted for
    /// the record itself.
    pub(crate) fn make_room(&mut self, priority: u8, bytes: usize) {
        let need = HEADER_BYTES + bytes as u64;
        while self.used_bytes() + need > self.quota {
            let Some(lowest) = self.lowest_on_disk().filter(|l| *l <= slot(priority)) else {
                return;
            };
            let over = self.used_bytes() + need - self.quota;
            if self.shed(lowest, over.max(self.quota / SHED_FRACTION)) == 0 {
                return;
            }
        }
    }

    /// Returns the lowest priority slot with records on disk.
    fn lowest_on_disk(&self) -> Option<usize> {
        (0..PRIORITY_SLOTS).find(|p| self.segments.iter().any(|s| s.counts[*p] > 0))
    }

    /// Rewrites the oldest segments holding `priority` without its oldest records (and
    /// without what was acknowledged) until `at_least` bytes are freed; counts the losses;
    /// returns the bytes freed (0 when the disk would not let it).
    fn shed(&mut self, priority: usize, at_least: u64) -> u64 {
        let acked = self.acked();
        let before = self.used_bytes();
        let mut budget = at_least as i64;
        let mut index = 0;
        while index < self.segments.len() && budget > 0 {
            if self.segments[index].counts[priority] == 0 {
                index += 1;
                continue;
            }
            let keep = |seq: u64, entry_priority: u8, bytes: usize| {
                if seq <= acked {
                    return false; // acknowledged: no loss, and room
                }
                if slot(entry_priority) != priority || budget <= 0 {
                    return true;
                }
                budget -= bytes as i64;
                false
            };
            let dropped = match self.segments[index].rewrite(keep) {
                Ok(dropped) => dropped,
                Err(error) => {
                    tracing::warn!(%error, "herald disk buffer cannot shed; the segment stands");
                    break;
                }
            };
            for (seq, lost) in dropped {
                if seq > acked {
                    self.lose(lost, DiskLoss::Quota, 1);
                }
            }
            let last = index + 1 == self.segments.len();
            if self.segments[index].records() == 0 && !last {
                let segment = self.segments.remove(index);
                if let Err(error) = segment.remove() {
                    tracing::warn!(%error, "herald disk buffer cannot delete a segment");
                }
            } else {
                index += 1;
            }
        }
        self.cursor = None; // offsets moved: read again from the start
        before.saturating_sub(self.used_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;

    fn spool(dir: &Path, quota: u64) -> Spool {
        Spool::open(dir, quota, || 77).unwrap()
    }

    struct TempDir(PathBuf);
    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    fn temp_dir(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!(
            "herald-spool-{name}-{}-{}",
            std::process::id(),
            crate::options::random_producer()
        ));
        TempDir(dir)
    }

    #[test]
    fn a_full_buffer_sheds_the_lowest_priority_first_and_counts_it() {
        let dir = temp_dir("quota");
        let mut spool = spool(&dir.0, MIN_BUFFER_QUOTA_BYTES);
        let record = vec![b'x'; 983]; // 1000 bytes an entry
        for i in 0..200 {
            let priority = if i % 4 == 0 { 8 } else { 4 }; // ERROR, else INFO
            spool.append(vec![(priority, record.clone())]);
        }
        assert!(spool.used_bytes() <= MIN_BUFFER_QUOTA_BYTES);
        let losses = spool.take_losses();
        let quota = losses[DiskLoss::Quota as usize];
        assert_eq!(quota[8], 0, "no ERROR is shed while INFO is there");
        let kept = spool.read(u64::MAX).unwrap();
        assert_eq!(kept.len() as u64 + quota[4], 200);
        let numbers: Vec<u64> = kept.iter().map(|(seq, ..)| *seq).collect();
        assert!(numbers.windows(2).all(|w| w[0] < w[1]), "in order");
        assert_eq!(numbers.last(), Some(&200), "the newest records stay");
    }

    #[test]
    fn a_drop_report_outlasts_emergency_records_that_fill_the_quota() {
        let dir = temp_dir("report-rank");
        let mut spool = spool(&dir.0, MIN_BUFFER_QUOTA_BYTES);
        spool.append(vec![(REPORT_RANK, b"report".to_vec())]);
        let emergency = herald_proto::Priority::Emergency as u8;
        for _ in 0..200 {
            spool.append(vec![(emergency, vec![b'x'; 983])]);
        }
        let kept = spool.read(u64::MAX).unwrap();
        assert_eq!(kept[0].2, b"report".to_vec(), "the report stays");
        let quota = spool.take_losses()[DiskLoss::Quota as usize];
        assert!(
            quota[usize::from(emergency)] > 0,
            "EMERGENCY records were shed"
        );
        assert_eq!(quota[usize::from(REPORT_RANK)], 0, "the report was not");
    }

    #[test]
    fn records_survive_a_reopen_and_acknowledged_ones_do_not() {
        let dir = temp_dir("reopen");
        let mut first = spool(&dir.0, 1 << 20);
        first.append((0..10u8).map(|i| (4, vec![i; 10])).collect());
        first.acknowledge(4); // numbered from 1: the first 4
        first.close();
        assert!(matches!(
            Spool::open(&dir.0, 1 << 20, || 1),
            Err(SpoolError::Locked { .. })
        ));
        drop(first);
        let mut again = spool(&dir.0, 1 << 20);
        assert_eq!(again.numbering().producer(), 77);
        let records = again.read(u64::MAX).unwrap();
        assert_eq!(records.len(), 6);
        assert_eq!(records[0].2, vec![4u8; 10]);
        assert!(again.numbering().next_seq() > records[5].0);
    }
}
