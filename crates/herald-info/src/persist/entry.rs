//! [`Entry`]: one change in the snapshot or the log, and its MessagePack body.

use herald_proto::info::{ObjectData, TypeData};
use herald_proto::msgpack::{self, Reader};
use herald_proto::DecodeError;

use crate::object::InfoObject;
use crate::type_def::TypeDef;

/// Entry operation codes (see the [module docs](super)).
mod op {
    pub const DECLARE_TYPE: u64 = 0;
    pub const PUT_OBJECT: u64 = 1;
    pub const DELETE_OBJECT: u64 = 2;
    pub const END: u64 = 3;
}

/// A decoded entry.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Entry {
    /// A type declaration.
    DeclareType(TypeDef),
    /// An object's whole value after a change.
    PutObject(InfoObject),
    /// An object's deletion.
    DeleteObject {
        /// The object's name.
        name: String,
        /// The producer's time of the deletion.
        time: i64,
        /// The deleted object's version, incremented.
        version: u64,
    },
    /// The end of a snapshot.
    End {
        /// Entries before this one.
        count: u64,
    },
}

/// Appends the body of a declare-type entry.
pub(crate) fn encode_declare(out: &mut Vec<u8>, def: &TypeDef) {
    msgpack::write_array_len(out, 2);
    msgpack::write_uint(out, op::DECLARE_TYPE);
    def.encode(out);
}

/// Appends the body of a put-object entry.
pub(crate) fn encode_put(out: &mut Vec<u8>, object: &InfoObject) {
    msgpack::write_array_len(out, 2);
    msgpack::write_uint(out, op::PUT_OBJECT);
    object.encode(out);
}

/// Appends the body of a delete-object entry.
pub(crate) fn encode_delete(out: &mut Vec<u8>, name: &str, time: i64, version: u64) {
    msgpack::write_array_len(out, 2);
    msgpack::write_uint(out, op::DELETE_OBJECT);
    msgpack::write_array_len(out, 3);
    msgpack::write_str(out, name);
    msgpack::write_int(out, time);
    msgpack::write_uint(out, version);
}

/// Appends the body of a snapshot's end entry.
pub(crate) fn encode_end(out: &mut Vec<u8>, count: u64) {
    msgpack::write_array_len(out, 2);
    msgpack::write_uint(out, op::END);
    msgpack::write_uint(out, count);
}

impl Entry {
    /// Decodes an entry body that fills all of `body`.
    ///
    /// # Errors
    /// A sentence saying what is wrong, for [`InfoError::Corrupt`](crate::InfoError::Corrupt).
    pub(crate) fn decode(body: &[u8]) -> Result<Entry, String> {
        let mut reader = Reader::new(body);
        let entry = Entry::decode_from(&mut reader).map_err(|err| err.to_string())?;
        if !reader.is_empty() {
            return Err(format!(
                "{} unexpected bytes after the entry",
                reader.remaining().len()
            ));
        }
        Ok(entry)
    }

    fn decode_from(reader: &mut Reader<'_>) -> Result<Entry, DecodeError> {
        let len = reader.read_array_len()?;
        if len != 2 {
            return Err(DecodeError::WrongLength {
                message: "store entry",
                expected: 2,
                found: len,
            });
        }
        let entry = match reader.read_uint()? {
            op::DECLARE_TYPE => {
                let data = TypeData::decode(reader)?;
                let def = TypeDef::from_data(data).map_err(|err| DecodeError::InvalidField {
                    field: "type",
                    reason: err.to_string(),
                })?;
                Entry::DeclareType(def)
            }
            op::PUT_OBJECT => Entry::PutObject(ObjectData::decode(reader)?.into()),
            op::DELETE_OBJECT => {
                let len = reader.read_array_len()?;
                if len != 3 {
                    return Err(DecodeError::WrongLength {
                        message: "delete entry",
                        expected: 3,
                        found: len,
                    });
                }
                Entry::DeleteObject {
                    name: reader.read_str()?.to_string(),
                    time: reader.read_int()?,
                    version: reader.read_uint()?,
                }
            }
            op::END => Entry::End {
                count: reader.read_uint()?,
            },
            other => {
                return Err(DecodeError::InvalidField {
                    field: "store entry",
                    reason: format!("unknown operation {other} (expected 0..3)"),
                })
            }
        };
        Ok(entry)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attr_type::AttrType;
    use crate::type_def::AttributeDef;
    use herald_proto::Value;

    fn decoded(encode: impl FnOnce(&mut Vec<u8>)) -> Entry {
        let mut body = Vec::new();
        encode(&mut body);
        Entry::decode(&body).unwrap()
    }

    #[test]
    fn every_entry_round_trips() {
        let mut def = TypeDef::new("RunInfo");
        def.attributes.push(AttributeDef::new(
            "gains",
            "array<float>".parse().unwrap(),
            "per channel",
        ));
        def.attributes
            .push(AttributeDef::new("when", AttrType::Time, ""));
        assert_eq!(
            decoded(|out| encode_declare(out, &def)),
            Entry::DeclareType(def)
        );
        let object = InfoObject {
            name: "RunParams.RunInfo".into(),
            type_name: "RunInfo".into(),
            time: -5,
            version: 7,
            attributes: vec![
                ("gains".into(), Value::Array(vec![Value::Float(0.5)])),
                ("when".into(), Value::Time(1)),
            ],
        };
        assert_eq!(
            decoded(|out| encode_put(out, &object)),
            Entry::PutObject(object)
        );
        assert_eq!(
            decoded(|out| encode_delete(out, "A.b", 3, 9)),
            Entry::DeleteObject {
                name: "A.b".into(),
                time: 3,
                version: 9
            }
        );
        assert_eq!(decoded(|out| encode_end(out, 4)), Entry::End { count: 4 });
    }

    #[test]
    fn malformed_bodies_are_explained() {
        assert_eq!(
            Entry::decode(&[0x92, 0x09, 0xc0]).unwrap_err(),
            "invalid store entry: unknown operation 9 (expected 0..3)"
        );
        let mut body = Vec::new();
        encode_end(&mut body, 1);
        body.push(0xc0);
        assert_eq!(
            Entry::decode(&body).unwrap_err(),
            "1 unexpected bytes after the entry"
        );
        assert!(Entry::decode(&[]).is_err());
    }
}
