//! Requests answered one by one: what the server needs to refuse a bad request on its own
//! while the connection, and the rest of a batch, live on.
//!
//! Every request body is an array whose first element is its correlation id (`cid`, or a
//! `PUBLISH`'s `ack_id`), so even a body that does not decode can be answered with an
//! `ERROR` carrying that id ([`request_cid`]). A `PUBLISH` is checked record by record
//! ([`CheckedPublish`]): one bad record is refused, the others are routed.

use bytes::Bytes;

use crate::error::DecodeError;
use crate::frame::{self, AckLevel, FrameType, Publish, RawRecord};
use crate::msgpack::Reader;
use crate::record::RecordMeta;
use crate::value_end::value_end;

/// A `PUBLISH` body checked record by record: the records that passed, and the first of
/// those that did not.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedPublish {
    /// The frame with only the records that passed, in their order.
    pub publish: Publish,
    /// How many were refused.
    pub refused: u32,
    /// The index and error of the first refused record.
    pub first_refused: Option<(u32, DecodeError)>,
}

impl CheckedPublish {
    /// Checks a `PUBLISH` body. A record that is not a valid record is refused alone when
    /// its markers and lengths show where it ends ([`value_end`]: whatever its strings or
    /// nesting hold); if its bytes end too soon or hold a marker that starts no value
    /// (`0xc1`), it and every record after it are refused, because where they start is lost.
    ///
    /// # Errors
    /// [`DecodeError`] when the frame itself is wrong: not an array of 3, a bad `ack_id`
    /// or level, no record array, or bytes after it.
    pub fn decode(body: &Bytes) -> Result<CheckedPublish, DecodeError> {
        let mut reader = Reader::new(body);
        // Three elements, or four when the producer numbers its records.
        let elements = reader.read_array_len()?;
        if elements != 3 && elements != 4 {
            return Err(DecodeError::WrongLength {
                message: "PUBLISH",
                expected: 3,
                found: elements,
            });
        }
        let ack_id = reader.read_uint()?;
        let ack = frame::read_ack_level(&mut reader)?;
        if ack != AckLevel::None && ack_id == 0 {
            return Err(DecodeError::InvalidField {
                field: "ack_id",
                reason: "an acknowledgement needs an ack_id of 1 or more".to_string(),
            });
        }
        let total = reader.read_array_len()?;
        let mut checked = CheckedPublish {
            // Each record is at least a few bytes, so the count can't exceed the body length.
            publish: Publish {
                ack_id,
                ack,
                records: Vec::with_capacity((total as usize).min(body.len())),
                first_seq: 0,
                seqs: Vec::new(),
            },
            refused: 0,
            first_refused: None,
        };
        // Indexes of refused records, to number the others (rarely any).
        let mut refused = Vec::new();
        for index in 0..total {
            let start = reader.position();
            let err = match RecordMeta::scan(&mut reader, start) {
                Ok(meta) => {
                    let bytes = body.slice(start..reader.position());
                    checked.publish.records.push(RawRecord { bytes, meta });
                    continue;
                }
                Err(err) => err,
            };
            refused.push(index);
            // Off the hot path: find where the bad record ends, to go on after it.
            let Some(end) = value_end(body, start) else {
                checked.refuse(index, err, total - index);
                // Where the records end is lost, and the number after them with it.
                return Ok(checked);
            };
            reader = Reader::at(body, end);
            checked.refuse(index, err, 1);
        }
        if elements == 4 {
            let first_seq = reader.read_uint()?;
            if first_seq == 0 {
                return Err(DecodeError::InvalidField {
                    field: "first_seq",
                    reason: "records are numbered from 1".to_string(),
                });
            }
            let publish = &mut checked.publish;
            publish.first_seq = first_seq;
            publish.seqs = (0..total)
                .filter(|index| refused.binary_search(index).is_err())
                .map(|index| first_seq + u64::from(index))
                .collect();
        }
        if !reader.is_empty() {
            return Err(DecodeError::TrailingBytes {
                count: reader.remaining().len(),
                message: FrameType::Publish.name(),
            });
        }
        Ok(checked)
    }

    /// Returns the frame as strict decoding sees it: an error for its first bad record.
    ///
    /// # Errors
    /// [`DecodeError::InvalidField`] naming the first refused record.
    pub fn into_strict(self) -> Result<Publish, DecodeError> {
        match self.first_refused {
            None => Ok(self.publish),
            Some((index, err)) => Err(DecodeError::InvalidField {
                field: "record",
                reason: format!("record {index}: {err}"),
            }),
        }
    }

    /// Says which records were refused and why, for an `ERROR bad_record`; `None` when
    /// every record passed.
    pub fn refusal(&self) -> Option<String> {
        let (index, err) = self.first_refused.as_ref()?;
        let refused = self.refused;
        let total = self.total();
        let more = match refused {
            1 => String::new(),
            _ => format!(" (the first of {refused})"),
        };
        Some(format!(
            "refused {refused} of {total} records; record {index}{more}: {err}"
        ))
    }

    /// Returns how many records the frame held: those routed and those refused.
    pub fn total(&self) -> u32 {
        u32::try_from(self.publish.records.len()).unwrap_or(u32::MAX) + self.refused
    }

    fn refuse(&mut self, index: u32, err: DecodeError, count: u32) {
        self.refused += count;
        self.first_refused.get_or_insert((index, err));
    }
}

impl From<Publish> for CheckedPublish {
    /// A frame whose records all passed.
    fn from(publish: Publish) -> CheckedPublish {
        CheckedPublish {
            refused: 0,
            first_refused: None,
            publish,
        }
    }
}

/// Reads the correlation id of a request frame (type byte and body) that did not decode:
/// the first element of its body array. `None` when even that cannot be read, or it is 0
/// (nobody to answer).
pub fn request_cid(frame: &[u8]) -> Option<u64> {
    let mut reader = Reader::new(frame.get(1..)?);
    if reader.read_array_len().ok()? == 0 {
        return None;
    }
    reader.read_uint().ok().filter(|cid| *cid != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack;
    use crate::{Frame, Kind, Record};

    fn publish_body(records: &[Vec<u8>]) -> Bytes {
        let mut body = Vec::new();
        msgpack::write_array_len(&mut body, 3);
        msgpack::write_uint(&mut body, 9);
        msgpack::write_uint(&mut body, 1);
        msgpack::write_array_len(&mut body, records.len() as u32);
        records.iter().for_each(|r| body.extend_from_slice(r));
        Bytes::from(body)
    }

    fn good(subject: &str) -> Vec<u8> {
        Record::new(Kind::Log, subject).to_bytes()
    }

    /// An extension type Herald does not define.
    const EXT_5: &[u8] = &[0xd7, 0x05, 0, 0, 0, 0, 0, 0, 0, 1];

    fn with_field(value: &[u8]) -> Vec<u8> {
        // A record whose one field is `value`, written by hand.
        let mut fields = Vec::new();
        msgpack::write_map_len(&mut fields, 1);
        msgpack::write_str(&mut fields, "counter");
        fields.extend_from_slice(value);
        let mut record = good("A.b");
        record[0] += 1; // one more key in the map header (a fixmap of 4 becomes 5)
        record.push(8);
        record.extend_from_slice(&fields);
        record
    }

    /// The subjects of the records taken, in order.
    fn subjects(checked: &CheckedPublish) -> Vec<&str> {
        checked
            .publish
            .records
            .iter()
            .map(|r| r.subject())
            .collect()
    }

    #[test]
    fn a_bad_record_is_refused_alone() {
        let body = publish_body(&[good("A.a"), with_field(EXT_5), good("A.c")]);
        let checked = CheckedPublish::decode(&body).unwrap();
        assert_eq!((checked.total(), checked.refused), (3, 1));
        assert_eq!(subjects(&checked), ["A.a", "A.c"]);
        let message = checked.refusal().unwrap();
        assert!(message.starts_with("refused 1 of 3 records; record 1: invalid fields: `counter` holds MessagePack extension type 5"), "{message}");
        // The same record with a value of the model is taken: the refusal is the value's,
        // and an unsigned 64-bit integer is such a value.
        let mut fits = Vec::new();
        msgpack::write_uint(&mut fits, u64::MAX);
        let fits = CheckedPublish::decode(&publish_body(&[with_field(&fits)])).unwrap();
        assert_eq!((fits.total(), fits.refused), (1, 0));
    }

    #[test]
    fn a_record_refused_for_what_its_bytes_hold_is_refused_alone() {
        // A string that is not UTF-8, and values nested deeper than the checks take: the
        // bytes still show where the record ends, so the record after it is taken.
        let not_utf8 = with_field(&[0xa2, 0xff, 0xfe]);
        let mut deep = vec![0x91; crate::msgpack::MAX_DEPTH as usize + 1];
        deep.push(0x01);
        for (bad, why) in [
            (not_utf8, "not valid UTF-8"),
            (with_field(&deep), "nested too deep"),
        ] {
            let body = publish_body(&[good("A.a"), bad, good("A.c")]);
            let checked = CheckedPublish::decode(&body).unwrap();
            assert_eq!((checked.total(), checked.refused), (3, 1), "{why}");
            assert_eq!(subjects(&checked), ["A.a", "A.c"], "{why}");
            let message = checked.refusal().unwrap();
            assert!(
                message.starts_with("refused 1 of 3 records; record 1: "),
                "{message}"
            );
            assert!(message.contains(why), "{message}");
        }
    }

    #[test]
    fn a_numbered_batch_keeps_the_numbers_of_the_records_taken() {
        let mut body = publish_body(&[good("A.a"), with_field(EXT_5), good("A.c")]).to_vec();
        body[0] = 0x94; // an array of 4: the number of the first record follows the records
        msgpack::write_uint(&mut body, 10);
        let checked = CheckedPublish::decode(&Bytes::from(body.clone())).unwrap();
        assert_eq!(checked.publish.first_seq, 10);
        assert_eq!(checked.publish.seqs, [10, 12], "record 11 was refused");
        *body.last_mut().unwrap() = 0;
        let zero = CheckedPublish::decode(&Bytes::from(body)).unwrap_err();
        assert!(zero.to_string().contains("numbered from 1"), "{zero}");
    }

    #[test]
    fn a_record_that_cannot_be_skipped_refuses_the_rest() {
        let mut broken = good("A.b");
        broken.truncate(3);
        broken.push(0xc1); // a marker that starts no value
        let body = publish_body(&[good("A.a"), broken, good("A.c"), good("A.d")]);
        let checked = CheckedPublish::decode(&body).unwrap();
        assert_eq!((checked.total(), checked.refused), (4, 3));
        assert_eq!(checked.publish.records.len(), 1);
        assert!(checked
            .refusal()
            .unwrap()
            .contains("record 1 (the first of 3)"));
    }

    #[test]
    fn strict_decoding_names_the_same_error_as_before() {
        let body = publish_body(&[good("A.a"), with_field(EXT_5)]);
        let mut frame = vec![FrameType::Publish as u8];
        frame.extend_from_slice(&body);
        let strict = Frame::decode(Bytes::from(frame)).unwrap_err().to_string();
        assert!(
            strict.starts_with(
                "malformed PUBLISH frame: invalid record: record 1: invalid fields: `counter`"
            ),
            "{strict}"
        );
    }

    #[test]
    fn reads_the_cid_of_a_body_that_does_not_decode() {
        assert_eq!(request_cid(&[0x20, 0x94, 0x07, 0xc1]), Some(7));
        assert_eq!(request_cid(&[0x55, 0x91, 0xcd, 0x01, 0x00]), Some(256));
        assert_eq!(request_cid(&[0x20, 0x94, 0x00]), None);
        assert_eq!(request_cid(&[0x20, 0x80]), None);
        assert_eq!(request_cid(&[0x40]), None);
    }
}
