//! Decimation: a name's samples folded into N equal time buckets, with min, max, mean,
//! count, first and last of every numeric field — what a chart needs, without shipping every
//! point. Numeric fields are read straight from the stored bytes; nothing else is decoded.

use std::collections::HashMap;

use herald_proto::archive::{Bucket, BucketQuery, FieldStats, MAX_BUCKETS};
use herald_proto::msgpack::{Kind as Marker, Reader};
use herald_proto::record::key;
use herald_proto::{DecodeError, PrioritySet};

use crate::backend::{Backend, RowRange, Source};
use crate::error::{ArchiveError, ArchiveErrorKind};
use crate::rows::{check_range, read_rows, Budget};

/// Rows read per page while folding.
const FOLD_PAGE_ROWS: usize = 16_384;

/// Folds `query.name`'s samples into buckets (buckets without samples are left out) and
/// hands them to `emit` in time order, in parts of at most `max_bytes` encoded (a part runs
/// over only when it holds one bucket larger than that), each with the stored records skipped
/// since the last part because they do not decode. A bucket is handed on as soon as a sample
/// of a later one arrives, so memory holds one part, never the whole answer. There is always
/// a last part, possibly empty; `emit` returning false stops.
///
/// # Errors
/// `BadQuery` for a bad range or bucket count, or the store's error.
pub fn buckets(
    backend: &dyn Backend,
    query: &BucketQuery,
    max_bytes: usize,
    mut emit: impl FnMut(Vec<Bucket>, u64) -> bool,
) -> Result<(), ArchiveError> {
    check_range(query.from, query.to)?;
    if query.buckets == 0 || query.buckets > MAX_BUCKETS {
        return Err(ArchiveError::bad_query(format!(
            "{} buckets asked; give 1 to {MAX_BUCKETS}",
            query.buckets
        )));
    }
    let mut folder = Folder::new(query.from, query.to, query.buckets);
    let mut part = Part::default();
    let mut range = RowRange {
        from: query.from,
        to: query.to,
        after: None,
        priorities: PrioritySet::ALL,
    };
    loop {
        let source = Source::Samples(&query.name);
        let budget = Budget::records(FOLD_PAGE_ROWS);
        let read = read_rows(backend, source, &range, budget, |_| Ok(true))?;
        part.skipped += read.skipped;
        for row in &read.rows {
            if let Some(done) = folder.add(row.time, &row.stored.record, query.field.as_deref())? {
                if !part.push(done, max_bytes, &mut emit) {
                    return Ok(());
                }
            }
        }
        match read.next {
            Some(next) => range.after = Some(next),
            None => break,
        }
    }
    if let Some(last) = folder.finish() {
        if !part.push(last, max_bytes, &mut emit) {
            return Ok(());
        }
    }
    emit(part.buckets, part.skipped);
    Ok(())
}

/// Buckets waiting to be handed on, and the stored records skipped since the last part.
#[derive(Default)]
struct Part {
    buckets: Vec<Bucket>,
    bytes: usize,
    skipped: u64,
}

impl Part {
    /// Adds a finished bucket, first handing on what is held if the bucket would take the
    /// part over `max_bytes`. Returns false when `emit` says stop.
    fn push(
        &mut self,
        bucket: Bucket,
        max_bytes: usize,
        emit: &mut impl FnMut(Vec<Bucket>, u64) -> bool,
    ) -> bool {
        let size = encoded_bound(&bucket);
        if !self.buckets.is_empty() && self.bytes + size > max_bytes {
            let buckets = std::mem::take(&mut self.buckets);
            if !emit(buckets, std::mem::take(&mut self.skipped)) {
                return false;
            }
            self.bytes = 0;
        }
        self.bytes += size;
        self.buckets.push(bucket);
        true
    }
}

/// At least the bytes `bucket` takes on the wire: array headers, three numbers of at most 9
/// bytes, and per field its name and six numbers.
fn encoded_bound(bucket: &Bucket) -> usize {
    let fields: usize = bucket
        .fields
        .iter()
        .map(|f| 1 + 5 + f.name.len() + 6 * 9)
        .sum();
    1 + 3 * 9 + 5 + fields
}

fn corrupt(err: DecodeError) -> ArchiveError {
    ArchiveError::new(
        ArchiveErrorKind::Corrupt,
        format!("archived record does not decode: {err}"),
    )
}

/// Calls `each` with every numeric top-level field of the encoded record (integers, floats
/// and booleans as 0/1), or only the one named `wanted`.
///
/// # Errors
/// [`DecodeError`] for bytes that are not a record.
pub fn numeric_fields(
    bytes: &[u8],
    wanted: Option<&str>,
    mut each: impl FnMut(&str, f64),
) -> Result<(), DecodeError> {
    let mut reader = Reader::new(bytes);
    for _ in 0..reader.read_map_len()? {
        let field = reader.read_uint()?;
        if field != key::FIELDS {
            reader.skip_value(1)?;
            continue;
        }
        for _ in 0..reader.read_map_len()? {
            let name = reader.read_str()?;
            if wanted.is_some_and(|w| w != name) {
                reader.skip_value(2)?;
                continue;
            }
            match reader.peek_kind()? {
                Marker::Int => match reader.read_int_or_uint()? {
                    Ok(v) => each(name, v as f64),
                    Err(v) => each(name, v as f64),
                },
                Marker::Float => each(name, reader.read_f64()?),
                Marker::Bool => each(name, f64::from(u8::from(reader.read_bool()?))),
                _ => reader.skip_value(2)?,
            }
        }
    }
    Ok(())
}

/// The bucket being filled, and where the buckets lie.
struct Folder {
    from: i64,
    span: i128,
    count: u32,
    current: Option<Bucket>,
    /// Where each field's statistics are in `current.fields` once it has more than
    /// [`SCANNED_FIELDS`]: a lookup that stays cheap however many fields a record has.
    positions: HashMap<String, usize>,
}

impl Folder {
    fn new(from: i64, to: i64, count: u32) -> Folder {
        let span = i128::from(to) - i128::from(from);
        Folder {
            from,
            span,
            count,
            current: None,
            positions: HashMap::new(),
        }
    }

    fn bounds(&self, index: i128) -> (i64, i64) {
        let start = i128::from(self.from) + index * self.span / i128::from(self.count);
        let end = i128::from(self.from) + (index + 1) * self.span / i128::from(self.count);
        (start as i64, end as i64)
    }

    /// Adds a sample (samples come in time order); returns the bucket it finished, if it
    /// is the first sample of a later bucket.
    fn add(
        &mut self,
        time: i64,
        bytes: &[u8],
        field: Option<&str>,
    ) -> Result<Option<Bucket>, ArchiveError> {
        let offset = i128::from(time) - i128::from(self.from);
        let mut index =
            (offset * i128::from(self.count) / self.span).min(i128::from(self.count) - 1);
        // Integer division may put a sample one bucket off; the bounds decide.
        while index > 0 && self.bounds(index).0 > time {
            index -= 1;
        }
        while index + 1 < i128::from(self.count) && self.bounds(index).1 <= time {
            index += 1;
        }
        let (start, end) = self.bounds(index);
        let mut finished = None;
        if self.current.as_ref().is_none_or(|b| b.start != start) {
            finished = self.finish();
            self.current = Some(Bucket {
                start,
                end,
                ..Bucket::default()
            });
        }
        let bucket = self.current.as_mut().expect("set above");
        bucket.count += 1;
        let positions = &mut self.positions;
        numeric_fields(bytes, field, |name, value| {
            fold(bucket, positions, name, value)
        })
        .map_err(corrupt)?;
        Ok(finished)
    }

    /// Takes the bucket being filled, its means computed.
    fn finish(&mut self) -> Option<Bucket> {
        self.positions.clear();
        let mut bucket = self.current.take()?;
        for stats in &mut bucket.fields {
            stats.mean /= stats.count as f64;
        }
        Some(bucket)
    }
}

/// Fields of a bucket looked up by a scan; past this many, by [`Folder::positions`].
const SCANNED_FIELDS: usize = 16;

/// Adds `value` to `bucket`'s statistics of `name`; `mean` holds the sum until `finish`.
fn fold(bucket: &mut Bucket, positions: &mut HashMap<String, usize>, name: &str, value: f64) {
    let found = if bucket.fields.len() <= SCANNED_FIELDS {
        bucket.fields.iter().position(|s| s.name == name)
    } else {
        positions.get(name).copied()
    };
    let index = match found {
        Some(index) => index,
        None => {
            bucket.fields.push(FieldStats {
                name: name.to_string(),
                min: value,
                max: value,
                first: value,
                ..FieldStats::default()
            });
            let index = bucket.fields.len() - 1;
            if bucket.fields.len() > SCANNED_FIELDS {
                if positions.is_empty() {
                    let names = bucket.fields.iter().map(|s| s.name.clone());
                    positions.extend(names.zip(0..));
                } else {
                    positions.insert(name.to_string(), index);
                }
            }
            index
        }
    };
    let stats = &mut bucket.fields[index];
    stats.count += 1;
    stats.min = stats.min.min(value);
    stats.max = stats.max.max(value);
    stats.mean += value;
    stats.last = value;
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::{Kind, Record, Value};

    #[test]
    fn numeric_fields_are_read_without_decoding_the_rest() {
        let mut record = Record::new(Kind::Info, "RunParams.Rate");
        record.text = "updated".into();
        record.fields = vec![
            ("rate".into(), Value::Float(2.5)),
            ("label".into(), Value::Str("x".into())),
            ("count".into(), Value::Int(-3)),
            ("on".into(), Value::Bool(true)),
            ("list".into(), Value::Array(vec![Value::Int(1)])),
        ];
        let bytes = record.to_bytes();
        let mut seen = Vec::new();
        numeric_fields(&bytes, None, |name, value| {
            seen.push((name.to_string(), value))
        })
        .unwrap();
        assert_eq!(
            seen,
            vec![
                ("rate".into(), 2.5),
                ("count".into(), -3.0),
                ("on".into(), 1.0)
            ]
        );
        seen.clear();
        numeric_fields(&bytes, Some("count"), |n, v| seen.push((n.to_string(), v))).unwrap();
        assert_eq!(seen, vec![("count".into(), -3.0)]);
    }

    #[test]
    fn buckets_split_the_range_evenly_and_keep_every_sample() {
        let mut folder = Folder::new(0, 10, 3);
        let mut buckets = Vec::new();
        for time in 0..10 {
            let mut record = Record::new(Kind::Info, "a");
            record.fields = vec![("v".into(), Value::Int(time))];
            buckets.extend(folder.add(time, &record.to_bytes(), None).unwrap());
        }
        buckets.extend(folder.finish());
        let shape: Vec<(i64, i64, u64)> =
            buckets.iter().map(|b| (b.start, b.end, b.count)).collect();
        assert_eq!(shape, vec![(0, 3, 3), (3, 6, 3), (6, 10, 4)]);
        let last = &buckets[2].fields[0];
        assert_eq!(
            (last.min, last.max, last.first, last.last, last.mean),
            (6.0, 9.0, 6.0, 9.0, 7.5)
        );
    }
}
