//! ACS logging XML, both ways: a record as an ACS log entry
//! (`<Warning TimeStamp="2026-11-27T04:00:00.123" File=".." Line="42" Routine=".."
//! Host=".." Process=".." SourceObject=".." Thread=".." LogId=".." Uri=".."
//! Audience=".."><![CDATA[text]]><Data Name="axis"><![CDATA[az]]></Data></Warning>`), as
//! ACS's logging documentation describes them (not checked against jlog itself), and such
//! entries read back into records (docs/interfaces.md, "ACS logging XML").
//!
//! The element is the priority (`Trace` … `Emergency`); `TimeStamp` is UTC to the
//! millisecond without a zone, as ACS writes it; `SourceObject` is the subject; the origin's
//! fields are the attributes of the same names; typed fields are `Data` children holding
//! their text (ACS data have no type: they come back as strings). Reading takes a sequence
//! of entries, bare or inside one root element (`<Log>`), with comments, an XML declaration,
//! CDATA sections and character references; anything else is an error naming its line and
//! column.

use herald_proto::time::{format_iso8601, parse_iso8601};
use herald_proto::value::Value;
use herald_proto::{Kind, Priority, Record};

/// The element of each priority, by wire value (0 and 7: none).
const ELEMENTS: [(&str, Priority); 10] = [
    ("Trace", Priority::Trace),
    ("Delouse", Priority::Delouse),
    ("Debug", Priority::Debug),
    ("Info", Priority::Info),
    ("Notice", Priority::Notice),
    ("Warning", Priority::Warning),
    ("Error", Priority::Error),
    ("Critical", Priority::Critical),
    ("Alert", Priority::Alert),
    ("Emergency", Priority::Emergency),
];

/// Returns the element name of `priority`.
pub fn element(priority: Priority) -> &'static str {
    ELEMENTS
        .iter()
        .find(|(_, p)| *p == priority)
        .map_or("Info", |(name, _)| name)
}

/// Appends `record` as one ACS log entry (no line end).
pub fn write_entry(record: &Record, out: &mut String) {
    let name = element(record.priority);
    out.push('<');
    out.push_str(name);
    // ACS's form: UTC, milliseconds, no zone.
    let stamp = format_iso8601(record.time);
    attribute(out, "TimeStamp", stamp.trim_end_matches('Z'));
    let origin = &record.origin;
    attribute(out, "File", &origin.file);
    if let Some(line) = origin.line {
        attribute(out, "Line", &line.to_string());
    }
    attribute(out, "Routine", &origin.routine);
    attribute(out, "Host", &origin.host);
    attribute(out, "Process", &origin.process);
    attribute(out, "SourceObject", &record.subject);
    attribute(out, "Thread", &origin.thread);
    attribute(out, "Context", &origin.context);
    attribute(out, "StackId", &origin.stack_id);
    if let Some(level) = origin.stack_level {
        attribute(out, "StackLevel", &level.to_string());
    }
    attribute(out, "LogId", &origin.log_id);
    attribute(out, "Uri", &origin.uri);
    attribute(out, "Audience", &record.audience.join(","));
    out.push('>');
    cdata(out, &record.text);
    for (field, value) in &record.fields {
        out.push_str("<Data");
        attribute(out, "Name", field);
        out.push('>');
        cdata(out, &value_text(value));
        out.push_str("</Data>");
    }
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

/// Returns the text a `Data` element holds for `value`.
fn value_text(value: &Value) -> String {
    match value {
        // To the nanosecond, and lists and maps as JSON, which reads back unambiguously.
        Value::Time(t) => herald_proto::time::format_iso8601_exact(*t),
        Value::Array(_) | Value::Map(_) => crate::json::value_json(value).to_string(),
        scalar => scalar.to_text(),
    }
}

/// Appends ` name="value"` (escaped), unless the value is empty.
fn attribute(out: &mut String, name: &str, value: &str) {
    if value.is_empty() {
        return;
    }
    out.push(' ');
    out.push_str(name);
    out.push_str("=\"");
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            '\t' => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `text` in CDATA sections (split where it holds `]]>`), nothing when empty.
fn cdata(out: &mut String, text: &str) {
    if text.is_empty() {
        return;
    }
    out.push_str("<![CDATA[");
    out.push_str(&text.replace("]]>", "]]]]><![CDATA[>"));
    out.push_str("]]>");
}

/// What is wrong with ACS XML, and where.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct AcsXmlError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (in characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

/// Reads every log entry of `text`, in order.
///
/// # Errors
/// [`AcsXmlError`] at the first thing that is not ACS logging XML.
pub fn parse(text: &str) -> Result<Vec<Record>, AcsXmlError> {
    let mut reader = Reader { text, at: 0 };
    let mut records = Vec::new();
    let mut root: Option<String> = None;
    loop {
        reader.skip_misc()?;
        if reader.rest().is_empty() {
            if let Some(root) = root {
                return Err(reader.error(format!("the file ends inside <{root}>")));
            }
            return Ok(records);
        }
        if reader.rest().starts_with("</") {
            let start = reader.at;
            reader.at += 2;
            let name = reader.name()?;
            reader.skip_space();
            reader.expect(">")?;
            match &root {
                Some(open) if *open == name => {
                    reader.skip_misc()?;
                    if !reader.rest().is_empty() {
                        return Err(reader.error(format!("text after </{name}>")));
                    }
                    return Ok(records);
                }
                _ => {
                    reader.at = start;
                    return Err(reader.error(format!("</{name}> closes nothing")));
                }
            }
        }
        let start = reader.at;
        reader.expect("<")?;
        let name = reader.name()?;
        if ELEMENTS.iter().any(|(element, _)| *element == name) {
            reader.at = start;
            records.push(reader.entry()?);
        } else if root.is_none() && records.is_empty() {
            // A root element around the entries (`<Log>`); its attributes are ignored.
            reader.attributes()?;
            if reader.rest().starts_with("/>") {
                reader.at += 2;
                continue;
            }
            reader.expect(">")?;
            root = Some(name);
        } else if name == "Header" {
            // jlog's files may carry a header element: skipped.
            reader.attributes()?;
            if !reader.rest().starts_with("/>") {
                reader.at = start;
                return Err(reader.error("<Header> must be empty (<Header …/>)".into()));
            }
            reader.at += 2;
        } else {
            reader.at = start;
            return Err(reader.error(format!(
                "<{name}> is not a log entry (expected one of {})",
                ELEMENTS.map(|(e, _)| e).join(", ")
            )));
        }
    }
}

struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl<'a> Reader<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.at..]
    }

    fn error(&self, message: String) -> AcsXmlError {
        let before = &self.text[..self.at];
        let line = before.matches('\n').count() + 1;
        let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
        AcsXmlError {
            line,
            column,
            message,
        }
    }

    fn expect(&mut self, what: &str) -> Result<(), AcsXmlError> {
        if self.rest().starts_with(what) {
            self.at += what.len();
            Ok(())
        } else {
            let found: String = self.rest().chars().take(12).collect();
            Err(self.error(format!("expected `{what}`, found `{found}`")))
        }
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.at += rest.len() - rest.trim_start().len();
    }

    /// Skips white space, comments, the XML declaration and processing instructions.
    fn skip_misc(&mut self) -> Result<(), AcsXmlError> {
        loop {
            self.skip_space();
            let (open, close) = if self.rest().starts_with("<!--") {
                ("<!--", "-->")
            } else if self.rest().starts_with("<?") {
                ("<?", "?>")
            } else {
                return Ok(());
            };
            match self.rest()[open.len()..].find(close) {
                Some(end) => self.at += open.len() + end + close.len(),
                None => return Err(self.error(format!("`{open}` without its `{close}`"))),
            }
        }
    }

    fn name(&mut self) -> Result<String, AcsXmlError> {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | ':')))
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(self.error("expected an element name".into()));
        }
        self.at += len;
        Ok(rest[..len].to_string())
    }

    fn attributes(&mut self) -> Result<Vec<(String, String, usize)>, AcsXmlError> {
        let mut attributes = Vec::new();
        loop {
            self.skip_space();
            if self.rest().starts_with('>') || self.rest().starts_with("/>") {
                return Ok(attributes);
            }
            if self.rest().is_empty() {
                return Err(self.error("the file ends inside a tag".into()));
            }
            let at = self.at;
            let name = self.name()?;
            self.skip_space();
            self.expect("=")?;
            self.skip_space();
            let quote = match self.rest().chars().next() {
                Some(q @ ('"' | '\'')) => q,
                _ => return Err(self.error(format!("the value of {name} is not quoted"))),
            };
            self.at += 1;
            let end = self
                .rest()
                .find(quote)
                .ok_or_else(|| self.error(format!("the value of {name} is not closed")))?;
            let raw = &self.rest()[..end];
            if raw.contains('<') {
                return Err(self.error(format!("`<` in the value of {name}")));
            }
            let value = self.unescape(raw, self.at)?;
            self.at += end + 1;
            if attributes
                .iter()
                .any(|(n, _, _): &(String, String, usize)| *n == name)
            {
                self.at = at;
                return Err(self.error(format!("attribute {name} given twice")));
            }
            attributes.push((name, value, at));
        }
    }

    /// Replaces entity and character references in `raw`, which starts at byte `base`.
    fn unescape(&self, raw: &str, base: usize) -> Result<String, AcsXmlError> {
        let at = |offset: usize| Reader {
            text: self.text,
            at: base + offset,
        };
        let mut out = String::with_capacity(raw.len());
        let mut rest = raw;
        while let Some(amp) = rest.find('&') {
            out.push_str(&rest[..amp]);
            let after = &rest[amp + 1..];
            let here = at(raw.len() - rest.len() + amp);
            let semi = after
                .find(';')
                .filter(|s| *s <= 10)
                .ok_or_else(|| here.error("`&` that starts no reference (write &amp;)".into()))?;
            let reference = &after[..semi];
            let c = match reference {
                "lt" => Some('<'),
                "gt" => Some('>'),
                "amp" => Some('&'),
                "quot" => Some('"'),
                "apos" => Some('\''),
                r if r.starts_with("#x") => u32::from_str_radix(&r[2..], 16)
                    .ok()
                    .and_then(char::from_u32),
                r if r.starts_with('#') => r[1..].parse().ok().and_then(char::from_u32),
                _ => None,
            };
            let c = c.ok_or_else(|| here.error(format!("unknown reference &{reference};")))?;
            out.push(c);
            rest = &after[semi + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    /// Reads character data and CDATA up to the next tag.
    fn content(&mut self) -> Result<String, AcsXmlError> {
        let mut text = String::new();
        loop {
            if self.rest().starts_with("<![CDATA[") {
                self.at += 9;
                let end = self
                    .rest()
                    .find("]]>")
                    .ok_or_else(|| self.error("a CDATA section without its `]]>`".into()))?;
                text.push_str(&self.rest()[..end]);
                self.at += end + 3;
            } else if self.rest().starts_with("<!--") {
                self.skip_misc()?;
            } else if self.rest().starts_with('<') || self.rest().is_empty() {
                return Ok(text);
            } else {
                let end = self.rest().find('<').unwrap_or(self.rest().len());
                let raw = &self.rest()[..end];
                text.push_str(&self.unescape(raw, self.at)?);
                self.at += end;
            }
        }
    }

    /// Reads one entry: `<Priority attributes>text<Data Name="…">…</Data>…</Priority>`.
    fn entry(&mut self) -> Result<Record, AcsXmlError> {
        let start = self.at;
        self.expect("<")?;
        let name = self.name()?;
        let priority = ELEMENTS
            .iter()
            .find(|(e, _)| *e == name)
            .map(|(_, p)| *p)
            .unwrap_or_default();
        let attributes = self.attributes()?;
        let mut record = Record {
            priority,
            time: 0,
            ..Record::new(Kind::Log, "acs")
        };
        let mut subject = None;
        for (attribute, value, at) in attributes {
            let here = Reader {
                text: self.text,
                at,
            };
            let number = |what: &str| {
                value
                    .parse::<u64>()
                    .map_err(|_| here.error(format!("{what} `{value}` is not a whole number")))
            };
            let origin = &mut record.origin;
            match attribute.as_str() {
                "TimeStamp" => {
                    let zoned = if value.ends_with('Z')
                        || value.len() > 23 && value[19..].contains(['+', '-'])
                    {
                        value.clone()
                    } else {
                        format!("{value}Z")
                    };
                    record.time = parse_iso8601(&zoned)
                        .map_err(|err| here.error(format!("TimeStamp: {err}")))?;
                }
                "File" => origin.file = value,
                "Line" => origin.line = Some(number("Line")?),
                "Routine" => origin.routine = value,
                "Host" => origin.host = value,
                "Process" => origin.process = value,
                "SourceObject" => subject = Some(value),
                "Thread" => origin.thread = value,
                "Context" => origin.context = value,
                "StackId" => origin.stack_id = value,
                "StackLevel" => origin.stack_level = Some(number("StackLevel")?),
                "LogId" => origin.log_id = value,
                "Uri" => origin.uri = value,
                "Audience" => {
                    record.audience = value
                        .split(',')
                        .map(str::trim)
                        .filter(|a| !a.is_empty())
                        .map(String::from)
                        .collect();
                }
                // ACS attributes Herald has no field for, kept as data.
                "Priority" | "Array" | "Antenna" => {
                    record.fields.push((attribute, Value::Str(value)))
                }
                other => {
                    return Err(here.error(format!("<{name}> has no attribute {other}")));
                }
            }
        }
        if record.time == 0 {
            let here = Reader {
                text: self.text,
                at: start,
            };
            return Err(here.error(format!("<{name}> without TimeStamp")));
        }
        record.subject = subject.filter(|s| !s.is_empty()).unwrap_or_else(|| {
            if record.origin.process.is_empty() {
                "acs".to_string()
            } else {
                format!("acs.{}", record.origin.process)
            }
        });
        if let Err(why) = herald_proto::record::check_subject(&record.subject) {
            let here = Reader {
                text: self.text,
                at: start,
            };
            return Err(here.error(format!("SourceObject: {why}")));
        }
        if self.rest().starts_with("/>") {
            self.at += 2;
            return Ok(record);
        }
        self.expect(">")?;
        loop {
            record.text.push_str(&self.content()?);
            if self.rest().starts_with("</") {
                let close_at = self.at;
                self.at += 2;
                let close = self.name()?;
                if close != name {
                    self.at = close_at;
                    return Err(self.error(format!("</{close}> closes <{name}>")));
                }
                self.skip_space();
                self.expect(">")?;
                return Ok(record);
            }
            if self.rest().is_empty() {
                return Err(self.error(format!("the file ends inside <{name}>")));
            }
            let start = self.at;
            self.expect("<")?;
            let child = self.name()?;
            if child != "Data" {
                self.at = start;
                return Err(self.error(format!(
                    "<{child}> inside <{name}> (only <Data Name=\"…\"> may be)"
                )));
            }
            let attributes = self.attributes()?;
            let Some((_, field, _)) = attributes.iter().find(|(n, _, _)| n == "Name") else {
                self.at = start;
                return Err(self.error("<Data> without Name".into()));
            };
            let field = field.clone();
            let value = if self.rest().starts_with("/>") {
                self.at += 2;
                String::new()
            } else {
                self.expect(">")?;
                let value = self.content()?;
                self.expect("</Data")?;
                self.skip_space();
                self.expect(">")?;
                value
            };
            record.fields.push((field, Value::Str(value)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use herald_proto::Origin;

    const T: i64 = 1_795_752_000_123_000_000; // 2026-11-27T04:00:00.123Z

    fn varied() -> Vec<Record> {
        let full = Record {
            time: T,
            priority: Priority::Warning,
            audience: vec!["operator".into(), "engineer".into()],
            origin: Origin {
                host: "dv01".into(),
                process: "mountctl".into(),
                thread: "main".into(),
                file: "mount.cpp".into(),
                line: Some(42),
                routine: "Mount::move".into(),
                context: "ctx".into(),
                stack_id: "s-1".into(),
                stack_level: Some(2),
                log_id: "MOUNT_FAULT".into(),
                uri: "http://x/?a=1&b=2".into(),
            },
            text: "encoder <fault> & \"quotes\" ]]> and\nlines".into(),
            fields: vec![
                ("axis".into(), Value::Str("az".into())),
                ("speed".into(), Value::Str("1.5".into())),
            ],
            ..Record::new(Kind::Log, "ANTENNA.DV01.Mount")
        };
        let bare = Record {
            time: T + 1_000_000,
            priority: Priority::Emergency,
            ..Record::new(Kind::Log, "X")
        };
        let trace = Record {
            time: T + 2_000_000,
            priority: Priority::Trace,
            text: "ünïcödé ✓".into(),
            ..Record::new(Kind::Log, "Y.z")
        };
        vec![full, bare, trace]
    }

    #[test]
    fn entries_round_trip_with_and_without_a_root() {
        let records = varied();
        let mut bare = String::new();
        for record in &records {
            write_entry(record, &mut bare);
            bare.push('\n');
        }
        assert!(
            bare.starts_with(
                "<Warning TimeStamp=\"2026-11-27T04:00:00.123\" File=\"mount.cpp\" Line=\"42\""
            ),
            "{bare}"
        );
        let wrapped = format!("<?xml version=\"1.0\"?>\n<!-- from jlog -->\n<Log>\n{bare}</Log>\n");
        for text in [&bare, &wrapped] {
            let back = parse(text).unwrap();
            assert_eq!(back, records, "{text}");
        }
    }

    #[test]
    fn typed_fields_come_back_as_their_text() {
        let record = Record {
            time: T,
            fields: vec![
                ("n".into(), Value::Int(-3)),
                ("ok".into(), Value::Bool(true)),
                (
                    "list".into(),
                    Value::Array(vec![Value::Int(1), Value::Str("a".into())]),
                ),
            ],
            ..Record::new(Kind::Log, "A")
        };
        let mut text = String::new();
        write_entry(&record, &mut text);
        let back = parse(&text).unwrap().remove(0);
        let texts: Vec<&Value> = back.fields.iter().map(|(_, v)| v).collect();
        assert_eq!(
            texts,
            [
                &Value::Str("-3".into()),
                &Value::Str("true".into()),
                &Value::Str("[1,\"a\"]".into())
            ]
        );
    }

    #[test]
    fn reads_what_acs_writes() {
        let acs = r#"<Info TimeStamp="2026-11-27T04:00:00.500" File="a.cpp" Line="7" Routine="f" Host="h" Process="p" SourceObject="CONTROL/DV01" Thread="t" LogId="L" Priority="4" Array="A1">plain &amp; text<Data Name="k">v &lt; w</Data><Data Name="empty"/></Info>"#;
        let record = parse(acs).unwrap().remove(0);
        assert_eq!(record.subject, "CONTROL/DV01");
        assert_eq!(record.text, "plain & text");
        assert_eq!(record.time, T + 377_000_000);
        assert!(record
            .fields
            .contains(&("k".into(), Value::Str("v < w".into()))));
        assert!(record
            .fields
            .contains(&("Array".into(), Value::Str("A1".into()))));
        assert!(record
            .fields
            .contains(&("empty".into(), Value::Str(String::new()))));
    }

    #[test]
    fn errors_name_the_line_and_column() {
        for (text, line, column, says) in [
            (
                "<Info TimeStamp=\"2026-11-27T04:00:00\">x</Inf>",
                1,
                40,
                "closes <Info>",
            ),
            (
                "<Log>\n  <Info TimeStamp=\"2026-11-27T04:00:00\">x</Info>\n  <Bogus/>\n</Log>",
                3,
                3,
                "<Bogus> is not a log entry",
            ),
            (
                "<Info\n  TimeStamp=\"yesterday\">x</Info>",
                2,
                3,
                "TimeStamp",
            ),
            (
                "<Info TimeStamp=\"2026-11-27T04:00:00\" Colour=\"red\">x</Info>",
                1,
                39,
                "no attribute Colour",
            ),
            (
                "<Info TimeStamp=\"2026-11-27T04:00:00\">a & b</Info>",
                1,
                41,
                "`&`",
            ),
            (
                "<Info TimeStamp=\"2026-11-27T04:00:00\">x",
                1,
                40,
                "ends inside <Info>",
            ),
            ("<Info>x</Info>", 1, 1, "without TimeStamp"),
            (
                "<Info TimeStamp=\"2026-11-27T04:00:00\" SourceObject=\"a*b\">x</Info>",
                1,
                1,
                "wildcards",
            ),
        ] {
            let err = parse(text).unwrap_err();
            assert_eq!((err.line, err.column), (line, column), "{text}: {err}");
            assert!(err.message.contains(says), "{text}: {err}");
        }
    }
}
