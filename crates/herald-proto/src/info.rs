//! Information objects on the wire: objects, type declarations and selections, as the
//! `INFO_*` frames carry them. The store and its rules live in `herald-info`; this module
//! only encodes and decodes.

use crate::error::DecodeError;
use crate::msgpack::{self, Reader};
use crate::value::{self, Field};
use crate::wire::{expect_array, read_opt_str, write_opt_str};

/// An information object: its latest value.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ObjectData {
    /// `Namespace.Object`.
    pub name: String,
    /// Its type's name.
    pub type_name: String,
    /// The producer's time of the last change, ns since the epoch.
    pub time: i64,
    /// Incremented by every change, from 1.
    pub version: u64,
    /// Attribute values.
    pub attributes: Vec<Field>,
}

/// One attribute of a type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AttributeData {
    /// Attribute name.
    pub name: String,
    /// Type as text: `bool`, `s8` … `u64`, `float`, `double`, `string`, `time`, `bytes`,
    /// `array<T>`, or another type's name.
    pub attr_type: String,
    /// For people.
    pub description: String,
}

/// A type declaration.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TypeData {
    /// Type name.
    pub name: String,
    /// Base type, whose attributes come first.
    pub base: Option<String>,
    /// For people.
    pub description: String,
    /// Own attributes (not the inherited ones).
    pub attributes: Vec<AttributeData>,
}

/// A selection of objects: a regular expression over names and/or a type selection
/// (`T`, `T+` with subtypes, `!T`, `!T+`), combined with `and` (default) or `or`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelectionData {
    /// Regular expression matched against whole names.
    pub name_regex: Option<String>,
    /// Type selection text.
    pub types: Option<String>,
    /// Combine with `or` instead of `and`.
    pub any: bool,
}

/// How an `INFO_UPDATE` treats an object that does or does not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[repr(u8)]
pub enum UpdateMode {
    /// Only a new object; every attribute must be given.
    Create = 0,
    /// Only an existing object; the given attributes replace those values.
    Update = 1,
    /// Either.
    #[default]
    Upsert = 2,
}

impl UpdateMode {
    fn from_u64(value: u64) -> Result<UpdateMode, DecodeError> {
        match value {
            0 => Ok(UpdateMode::Create),
            1 => Ok(UpdateMode::Update),
            2 => Ok(UpdateMode::Upsert),
            _ => Err(DecodeError::InvalidField {
                field: "update mode",
                reason: format!("unknown mode {value} (expected 0 create, 1 update, 2 upsert)"),
            }),
        }
    }
}

impl ObjectData {
    /// Appends `[name, type, time, version, attributes]`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 5);
        msgpack::write_str(out, &self.name);
        msgpack::write_str(out, &self.type_name);
        msgpack::write_int(out, self.time);
        msgpack::write_uint(out, self.version);
        value::encode_fields(out, &self.attributes);
    }

    /// Decodes what [`ObjectData::encode`] wrote.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes.
    pub fn decode(reader: &mut Reader<'_>) -> Result<ObjectData, DecodeError> {
        expect_array(reader, "info object", 5)?;
        Ok(ObjectData {
            name: reader.read_str()?.to_string(),
            type_name: reader.read_str()?.to_string(),
            time: reader.read_int()?,
            version: reader.read_uint()?,
            attributes: value::decode_fields(reader, 1)?,
        })
    }
}

impl TypeData {
    /// Appends `[name, base or nil, description, [[name, type, description], …]]`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 4);
        msgpack::write_str(out, &self.name);
        write_opt_str(out, self.base.as_deref());
        msgpack::write_str(out, &self.description);
        msgpack::write_array_len(out, msgpack::len_u32(self.attributes.len()));
        for attribute in &self.attributes {
            msgpack::write_array_len(out, 3);
            msgpack::write_str(out, &attribute.name);
            msgpack::write_str(out, &attribute.attr_type);
            msgpack::write_str(out, &attribute.description);
        }
    }

    /// Decodes what [`TypeData::encode`] wrote.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes.
    pub fn decode(reader: &mut Reader<'_>) -> Result<TypeData, DecodeError> {
        expect_array(reader, "type", 4)?;
        let mut data = TypeData {
            name: reader.read_str()?.to_string(),
            base: read_opt_str(reader)?,
            description: reader.read_str()?.to_string(),
            attributes: Vec::new(),
        };
        for _ in 0..reader.read_array_len()? {
            expect_array(reader, "attribute", 3)?;
            data.attributes.push(AttributeData {
                name: reader.read_str()?.to_string(),
                attr_type: reader.read_str()?.to_string(),
                description: reader.read_str()?.to_string(),
            });
        }
        Ok(data)
    }
}

impl SelectionData {
    /// Appends `[name regex or nil, type selection or nil, any]`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 3);
        write_opt_str(out, self.name_regex.as_deref());
        write_opt_str(out, self.types.as_deref());
        msgpack::write_bool(out, self.any);
    }

    /// Decodes what [`SelectionData::encode`] wrote.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes.
    pub fn decode(reader: &mut Reader<'_>) -> Result<SelectionData, DecodeError> {
        expect_array(reader, "selection", 3)?;
        Ok(SelectionData {
            name_regex: read_opt_str(reader)?,
            types: read_opt_str(reader)?,
            any: reader.read_bool()?,
        })
    }
}

/// An info request from a client; each is answered by `INFO_REPLY` or `ERROR` under `cid`.
#[derive(Debug, Clone, PartialEq)]
pub enum InfoRequest {
    /// Declare a type; answered with an empty `INFO_REPLY`.
    Declare(TypeData),
    /// Create or change an object; answered with the object after the change.
    Update {
        /// Create, update or either.
        mode: UpdateMode,
        /// The object's name.
        name: String,
        /// Its type (required to create).
        type_name: Option<String>,
        /// Producer's time, ns.
        time: i64,
        /// The attributes to set.
        attributes: Vec<Field>,
    },
    /// Delete an object; answered with the object as it was, version incremented.
    Delete {
        /// The object's name.
        name: String,
        /// Producer's time, ns.
        time: i64,
    },
    /// Get objects by name, all at one instant; answered with one entry per name (nil if
    /// there is no such object).
    Get(Vec<String>),
    /// List the objects a selection matches, by name.
    List(SelectionData),
    /// List every declared type.
    Types,
}

impl InfoRequest {
    fn op(&self) -> u64 {
        match self {
            InfoRequest::Declare(_) => 0,
            InfoRequest::Update { .. } => 1,
            InfoRequest::Delete { .. } => 2,
            InfoRequest::Get(_) => 3,
            InfoRequest::List(_) => 4,
            InfoRequest::Types => 5,
        }
    }

    /// Appends `[op, arguments]`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 2);
        msgpack::write_uint(out, self.op());
        match self {
            InfoRequest::Declare(data) => data.encode(out),
            InfoRequest::Update {
                mode,
                name,
                type_name,
                time,
                attributes,
            } => {
                msgpack::write_array_len(out, 5);
                msgpack::write_uint(out, *mode as u64);
                msgpack::write_str(out, name);
                write_opt_str(out, type_name.as_deref());
                msgpack::write_int(out, *time);
                value::encode_fields(out, attributes);
            }
            InfoRequest::Delete { name, time } => {
                msgpack::write_array_len(out, 2);
                msgpack::write_str(out, name);
                msgpack::write_int(out, *time);
            }
            InfoRequest::Get(names) => {
                msgpack::write_array_len(out, msgpack::len_u32(names.len()));
                for name in names {
                    msgpack::write_str(out, name);
                }
            }
            InfoRequest::List(selection) => selection.encode(out),
            InfoRequest::Types => msgpack::write_nil(out),
        }
    }

    /// Decodes what [`InfoRequest::encode`] wrote.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes or an unknown operation.
    pub fn decode(reader: &mut Reader<'_>) -> Result<InfoRequest, DecodeError> {
        expect_array(reader, "info request", 2)?;
        let request = match reader.read_uint()? {
            0 => InfoRequest::Declare(TypeData::decode(reader)?),
            1 => {
                expect_array(reader, "info update", 5)?;
                InfoRequest::Update {
                    mode: UpdateMode::from_u64(reader.read_uint()?)?,
                    name: reader.read_str()?.to_string(),
                    type_name: read_opt_str(reader)?,
                    time: reader.read_int()?,
                    attributes: value::decode_fields(reader, 1)?,
                }
            }
            2 => {
                expect_array(reader, "info delete", 2)?;
                InfoRequest::Delete {
                    name: reader.read_str()?.to_string(),
                    time: reader.read_int()?,
                }
            }
            3 => {
                let mut names = Vec::new();
                for _ in 0..reader.read_array_len()? {
                    names.push(reader.read_str()?.to_string());
                }
                InfoRequest::Get(names)
            }
            4 => InfoRequest::List(SelectionData::decode(reader)?),
            5 => {
                if !reader.read_nil()? {
                    return Err(DecodeError::InvalidField {
                        field: "types request",
                        reason: "expected nil".into(),
                    });
                }
                InfoRequest::Types
            }
            op => {
                return Err(DecodeError::InvalidField {
                    field: "info operation",
                    reason: format!("unknown operation {op} (expected 0..5)"),
                })
            }
        };
        Ok(request)
    }
}

/// The answer to an [`InfoRequest`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct InfoReply {
    /// Objects (or `None` for a name with no object, in answers to `Get`).
    pub objects: Vec<Option<ObjectData>>,
    /// Types (answers to `Types`).
    pub types: Vec<TypeData>,
}

impl InfoReply {
    /// Appends `[[object or nil, …], [type, …]]`.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 2);
        msgpack::write_array_len(out, msgpack::len_u32(self.objects.len()));
        for object in &self.objects {
            match object {
                Some(object) => object.encode(out),
                None => msgpack::write_nil(out),
            }
        }
        msgpack::write_array_len(out, msgpack::len_u32(self.types.len()));
        for data in &self.types {
            data.encode(out);
        }
    }

    /// Splits the answer into parts whose encoding is at most about `max_bytes` each (an
    /// object or type larger than that goes alone), in order: objects first, then types.
    /// Sent as `INFO_REPLY` frames under one cid, all but the last marked `more`, so no
    /// frame exceeds the limit the client was told.
    pub fn split(self, max_bytes: usize) -> Vec<InfoReply> {
        let mut parts = vec![InfoReply::default()];
        let mut size = 0;
        let mut scratch = Vec::new();
        let mut room = |parts: &mut Vec<InfoReply>, len: usize| {
            let current = parts.last().expect("one part at least");
            let empty = current.objects.is_empty() && current.types.is_empty();
            if !empty && size + len > max_bytes {
                parts.push(InfoReply::default());
                size = 0;
            }
            size += len;
        };
        for object in self.objects {
            scratch.clear();
            match &object {
                Some(object) => object.encode(&mut scratch),
                None => msgpack::write_nil(&mut scratch),
            }
            room(&mut parts, scratch.len());
            parts.last_mut().expect("a part").objects.push(object);
        }
        for data in self.types {
            scratch.clear();
            data.encode(&mut scratch);
            room(&mut parts, scratch.len());
            parts.last_mut().expect("a part").types.push(data);
        }
        parts
    }

    /// Appends a later part of the same answer (see [`InfoReply::split`]).
    pub fn extend(&mut self, part: InfoReply) {
        self.objects.extend(part.objects);
        self.types.extend(part.types);
    }

    /// Decodes what [`InfoReply::encode`] wrote.
    ///
    /// # Errors
    /// [`DecodeError`] for malformed bytes.
    pub fn decode(reader: &mut Reader<'_>) -> Result<InfoReply, DecodeError> {
        expect_array(reader, "info reply", 2)?;
        let mut reply = InfoReply::default();
        for _ in 0..reader.read_array_len()? {
            reply.objects.push(if reader.read_nil()? {
                None
            } else {
                Some(ObjectData::decode(reader)?)
            });
        }
        for _ in 0..reader.read_array_len()? {
            reply.types.push(TypeData::decode(reader)?);
        }
        Ok(reply)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Value;

    fn round_trip(request: InfoRequest) {
        let mut out = Vec::new();
        request.encode(&mut out);
        assert_eq!(
            InfoRequest::decode(&mut Reader::new(&out)).unwrap(),
            request
        );
    }

    #[test]
    fn a_large_reply_splits_into_parts_that_fit_and_join_back() {
        let object = |n: u32| {
            Some(ObjectData {
                name: format!("Big.Object{n}"),
                type_name: "T".into(),
                time: 1,
                version: 1,
                attributes: vec![("text".into(), Value::Str("x".repeat(100)))],
            })
        };
        let reply = InfoReply {
            objects: (0..1000).map(object).chain([None]).collect(),
            types: vec![],
        };
        let parts = reply.clone().split(10_000);
        assert!(parts.len() > 10, "{} parts", parts.len());
        for part in &parts {
            let mut out = Vec::new();
            part.encode(&mut out);
            assert!(out.len() <= 10_000 + 16, "a part of {} bytes", out.len());
        }
        let mut joined = InfoReply::default();
        parts.into_iter().for_each(|part| joined.extend(part));
        assert_eq!(joined, reply);
        assert_eq!(InfoReply::default().split(100), [InfoReply::default()]);
    }

    #[test]
    fn every_request_and_reply_round_trips() {
        let run_info = TypeData {
            name: "RunInfo".into(),
            base: Some("Base".into()),
            description: "the current run".into(),
            attributes: vec![AttributeData {
                name: "run".into(),
                attr_type: "u32".into(),
                description: "number".into(),
            }],
        };
        round_trip(InfoRequest::Declare(run_info.clone()));
        round_trip(InfoRequest::Update {
            mode: UpdateMode::Create,
            name: "RunParams.RunInfo".into(),
            type_name: Some("RunInfo".into()),
            time: 5,
            attributes: vec![("run".into(), Value::Int(42))],
        });
        round_trip(InfoRequest::Delete {
            name: "RunParams.RunInfo".into(),
            time: 6,
        });
        round_trip(InfoRequest::Get(vec!["A.b".into(), "A.c".into()]));
        round_trip(InfoRequest::List(SelectionData {
            name_regex: Some("SR\\..*".into()),
            types: Some("RunInfo+".into()),
            any: true,
        }));
        round_trip(InfoRequest::Types);
        let reply = InfoReply {
            objects: vec![
                Some(ObjectData {
                    name: "A.b".into(),
                    type_name: "T".into(),
                    time: 1,
                    version: 2,
                    attributes: vec![],
                }),
                None,
            ],
            types: vec![run_info],
        };
        let mut out = Vec::new();
        reply.encode(&mut out);
        assert_eq!(InfoReply::decode(&mut Reader::new(&out)).unwrap(), reply);
    }

    #[test]
    fn unknown_operations_are_named() {
        let err = InfoRequest::decode(&mut Reader::new(&[0x92, 0x09, 0xc0])).unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid info operation: unknown operation 9 (expected 0..5)"
        );
    }
}
