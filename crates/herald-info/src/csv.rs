//! The CSV form of archived records and buckets — one form for the HTTP API
//! (`format=csv`) and `herald query --csv`. Cells with commas, quotes or line breaks are
//! quoted (RFC 4180); times are ISO 8601 UTC beside integer nanoseconds.

use herald_proto::archive::Bucket;
use herald_proto::time::format_iso8601;
use herald_proto::Record;

/// Which columns a CSV of records has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// One line per field of each sample: `time,time_ns,seq,name,field,value`.
    Samples,
    /// One line per log record: `time,time_ns,seq,priority,subject,host,process,text`.
    Logs,
}

/// Quotes a cell when it needs it.
pub fn cell(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// Returns the header line for `columns`.
pub fn header(columns: Columns) -> &'static str {
    match columns {
        Columns::Samples => "time,time_ns,seq,name,field,value\n",
        Columns::Logs => "time,time_ns,seq,priority,subject,host,process,text\n",
    }
}

/// Appends the lines of one record numbered `seq`.
pub fn record_lines(out: &mut String, columns: Columns, record: &Record, seq: u64) {
    let time = format_iso8601(record.time);
    match columns {
        Columns::Samples => {
            for (name, value) in &record.fields {
                out.push_str(&format!(
                    "{time},{},{seq},{},{},{}\n",
                    record.time,
                    cell(&record.subject),
                    cell(name),
                    cell(&value.to_text())
                ));
            }
        }
        Columns::Logs => out.push_str(&format!(
            "{time},{},{seq},{},{},{},{},{}\n",
            record.time,
            record.priority.name(),
            cell(&record.subject),
            cell(&record.origin.host),
            cell(&record.origin.process),
            cell(&record.text)
        )),
    }
}

/// The header line of buckets as CSV.
pub const BUCKETS_HEADER: &str =
    "start,start_ns,end_ns,count,field,field_count,min,max,mean,first,last\n";

/// Returns buckets as CSV with a header, one line per bucket and field.
pub fn buckets(buckets: &[Bucket]) -> String {
    let mut out = String::from(BUCKETS_HEADER);
    for bucket in buckets {
        bucket_lines(&mut out, bucket);
    }
    out
}

/// Appends the lines of one bucket, one per field.
pub fn bucket_lines(out: &mut String, bucket: &Bucket) {
    for s in &bucket.fields {
        out.push_str(&format!(
            "{},{},{},{},{},{},{},{},{},{},{}\n",
            format_iso8601(bucket.start),
            bucket.start,
            bucket.end,
            bucket.count,
            cell(&s.name),
            s.count,
            s.min,
            s.max,
            s.mean,
            s.first,
            s.last
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::{Kind, Priority, Value};

    #[test]
    fn cells_are_quoted_only_when_needed() {
        assert_eq!(cell("plain"), "plain");
        assert_eq!(cell("a,b"), "\"a,b\"");
        assert_eq!(cell("say \"hi\"\n"), "\"say \"\"hi\"\"\n\"");
        let record = Record {
            time: 0,
            priority: Priority::Error,
            text: "axis, stuck".into(),
            fields: vec![("v".into(), Value::Int(3))],
            ..Record::new(Kind::Log, "A")
        };
        let mut out = String::new();
        record_lines(&mut out, Columns::Logs, &record, 7);
        assert_eq!(
            out,
            "1970-01-01T00:00:00.000Z,0,7,ERROR,A,,,\"axis, stuck\"\n"
        );
        out.clear();
        record_lines(&mut out, Columns::Samples, &record, 7);
        assert_eq!(out, "1970-01-01T00:00:00.000Z,0,7,A,v,3\n");
    }
}
