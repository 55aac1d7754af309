//! The byte dumps in docs/protocol.md are the test vectors' bytes: programs are written from
//! the document alone, so a dump that drifted from the wire (as `subscribe_inbox` once did,
//! an array of 3 where the frame has 4) misleads them.
//!
//! A dump is a fenced block whose lines start with hex bytes (`00 00 00 17 20 94 …`), maybe
//! after a vector's name, with quoted strings for a string's bytes (`af "_INBOX.5f3a9c.*"`)
//! and words after them saying what the bytes mean; a `…` leaves bytes out. A line that
//! starts with a frame's 4-byte length, once the frame before is whole, starts a frame. Each
//! frame a dump shows must be a vector's (the one it names, if it names one): its first
//! bytes where the vector's start, and each run after a `…` further on in it. A dump of a
//! record alone must be found inside a vector the same way.

use herald_testkit::vectors::{self, Vector};

/// One frame (or record) a dump shows: the line it starts on, the vector it names, and its
/// runs of bytes (a `…` between each two).
struct Shown {
    line: usize,
    name: Option<String>,
    runs: Vec<Vec<u8>>,
}

impl Shown {
    /// The frame's length field, once its four bytes are shown (`None` for a record alone).
    fn frame_len(&self) -> Option<usize> {
        let first = self.runs.first()?;
        (first.len() >= 4 && first[..2] == [0, 0])
            .then(|| 4 + u32::from_be_bytes(first[..4].try_into().unwrap()) as usize)
    }

    /// Whether every byte of the frame is shown, without a `…`.
    fn whole(&self) -> bool {
        self.runs.len() == 1 && self.frame_len() == Some(self.runs[0].len())
    }

    /// Whether `vector` holds these runs in order, the first at its start for a frame.
    fn is_in(&self, vector: &Vector) -> bool {
        if self.name.as_deref().is_some_and(|name| name != vector.name) {
            return false;
        }
        let mut at = 0;
        for (index, run) in self.runs.iter().filter(|r| !r.is_empty()).enumerate() {
            let Some(found) = vector.bytes[at..]
                .windows(run.len())
                .position(|window| window == run.as_slice())
            else {
                return false;
            };
            if index == 0 && self.frame_len().is_some() && found != 0 {
                return false;
            }
            at += found + run.len();
        }
        true
    }
}

/// A piece of a dump's line: a byte, or a `…`.
#[derive(PartialEq)]
enum Piece {
    Byte(u8),
    Elided,
}

/// Reads what a line of a dump shows (after a vector's name, if it starts with one): hex
/// pairs, `…`, and quoted strings just after a string marker whose length they fill. Stops at
/// the first word that is none of these: what the bytes mean.
fn read_line(text: &str, names: &[&str]) -> (Option<String>, Vec<Piece>) {
    let mut rest = text.trim_start();
    let mut name = None;
    if let Some((first, after)) = rest.split_once("  ") {
        if names.contains(&first) {
            name = Some(first.to_string());
            rest = after;
        }
    }
    let mut pieces = Vec::new();
    // A string's bytes, when the byte before was its marker.
    let mut string_len = None;
    loop {
        rest = rest.trim_start();
        if let Some(after) = rest.strip_prefix('…') {
            pieces.push(Piece::Elided);
            string_len = None;
            rest = after;
            continue;
        }
        if let (Some(len), Some(quoted)) = (string_len, rest.strip_prefix('"')) {
            let Some(end) = quoted.find('"') else { break };
            if quoted[..end].len() != len {
                break;
            }
            pieces.extend(quoted[..end].bytes().map(Piece::Byte));
            string_len = None;
            rest = &quoted[end + 1..];
            continue;
        }
        let word = rest.split(char::is_whitespace).next().unwrap_or("");
        let is_pair =
            word.len() == 2 && word.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !is_pair {
            break;
        }
        let byte = u8::from_str_radix(word, 16).unwrap();
        let previous = pieces.last().and_then(|p| match p {
            Piece::Byte(b) => Some(*b),
            Piece::Elided => None,
        });
        string_len = match (previous, byte) {
            (Some(0xd9), len) => Some(usize::from(len)),
            (_, 0xa0..=0xbf) => Some(usize::from(byte & 0x1f)),
            _ => None,
        };
        pieces.push(Piece::Byte(byte));
        rest = &rest[2..];
    }
    (name, pieces)
}

/// Every frame or record the document's dumps show.
fn dumps(doc: &str, names: &[&str]) -> Vec<Shown> {
    let mut shown: Vec<Shown> = Vec::new();
    let mut in_block = false;
    // Whether the last frame or record goes on into the next line.
    let mut open = false;
    for (index, line) in doc.lines().enumerate() {
        if line.starts_with("```") {
            (in_block, open) = (!in_block, false);
            continue;
        }
        let (name, pieces) = read_line(line, names);
        if !in_block || pieces.is_empty() {
            open = false;
            continue;
        }
        let framed = pieces.len() >= 5 && pieces[..2] == [Piece::Byte(0), Piece::Byte(0)];
        let goes_on = match shown.last() {
            Some(last) => open && name.is_none() && !(framed && last.whole()),
            None => false,
        };
        if !goes_on {
            shown.push(Shown {
                line: index + 1,
                name,
                runs: vec![Vec::new()],
            });
        }
        let dump = shown.last_mut().unwrap();
        for piece in pieces {
            match piece {
                Piece::Byte(byte) => dump.runs.last_mut().unwrap().push(byte),
                Piece::Elided => dump.runs.push(Vec::new()),
            }
        }
        open = true;
    }
    shown
}

#[test]
fn every_dump_in_the_protocol_document_is_a_vector_s_bytes() {
    let path = vectors::directory().join("../../docs/protocol.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let all: Vec<Vector> = vectors::load_all();
    let names: Vec<&str> = all.iter().map(|v| v.name.as_str()).collect();
    let shown = dumps(&doc, &names);
    assert!(shown.len() >= 15, "only {} dumps read", shown.len());
    let wrong: Vec<String> = shown
        .iter()
        .filter(|dump| !all.iter().any(|vector| dump.is_in(vector)))
        .map(|dump| {
            let runs: Vec<String> = dump.runs.iter().map(|r| vectors::to_hex(r)).collect();
            let name = dump
                .name
                .as_deref()
                .map(|n| format!(" ({n})"))
                .unwrap_or_default();
            format!("docs/protocol.md:{}{name}: {}", dump.line, runs.join(" … "))
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "dumps that are no vector's bytes:\n{}",
        wrong.join("\n")
    );
}
