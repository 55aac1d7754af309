//! [`InfoObject`] (an object's latest value), [`ObjectUpdate`] (a change a producer asks
//! for) and [`Change`] (what a change did).

use std::fmt;

use herald_proto::info::ObjectData;
use herald_proto::msgpack;
use herald_proto::value::{self, Field, Value};

pub use herald_proto::info::UpdateMode;

/// An information object: the latest value of a named, typed object.
///
/// # Memory
/// In the store an object costs its slot in the B-tree — this struct (88 bytes on 64-bit
/// targets) and the 24-byte key, in nodes about 70 % full, so about 160 bytes — plus heap:
/// its name twice (the key and `name`), its type name, 56 bytes per attribute (a `String` and
/// a [`Value`]), each attribute's name, and the contents of string, bytes, array and map
/// values, each allocation rounded up by the allocator. An object of ten numeric attributes
/// with short names takes about 1 KB; `herald bench info` measures it.
#[derive(Debug, Clone, PartialEq)]
pub struct InfoObject {
    /// `Namespace.Object` (see [`check_name`](crate::check_name)).
    pub name: String,
    /// Its type's name.
    pub type_name: String,
    /// The producer's time of the last change, ns since the Unix epoch.
    pub time: i64,
    /// 1 when created, incremented by every change.
    pub version: u64,
    /// Attribute values, in the type's attribute order (inherited first).
    pub attributes: Vec<Field>,
}

impl InfoObject {
    /// Returns the value of attribute `name`.
    pub fn attribute(&self, name: &str) -> Option<&Value> {
        self.attributes
            .iter()
            .find(|(attribute, _)| attribute == name)
            .map(|(_, value)| value)
    }

    /// Returns the object's namespace: the first dot-separated token of its name.
    pub fn namespace(&self) -> &str {
        crate::name::namespace(&self.name)
    }

    /// Appends the same bytes as [`ObjectData::encode`], without copying the object.
    pub fn encode(&self, out: &mut Vec<u8>) {
        msgpack::write_array_len(out, 5);
        msgpack::write_str(out, &self.name);
        msgpack::write_str(out, &self.type_name);
        msgpack::write_int(out, self.time);
        msgpack::write_uint(out, self.version);
        value::encode_fields(out, &self.attributes);
    }
}

impl From<ObjectData> for InfoObject {
    fn from(data: ObjectData) -> Self {
        InfoObject {
            name: data.name,
            type_name: data.type_name,
            time: data.time,
            version: data.version,
            attributes: data.attributes,
        }
    }
}

impl From<InfoObject> for ObjectData {
    fn from(object: InfoObject) -> Self {
        ObjectData {
            name: object.name,
            type_name: object.type_name,
            time: object.time,
            version: object.version,
            attributes: object.attributes,
        }
    }
}

/// A change a producer asks for: create, update or upsert one object (see [`UpdateMode`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ObjectUpdate {
    /// The object's name.
    pub name: String,
    /// Its type: required to create; when updating, it must be the object's type.
    pub type_name: Option<String>,
    /// The producer's time of the change, ns since the Unix epoch.
    pub time: i64,
    /// The attributes to set: all of them to create, any of them to update.
    pub attributes: Vec<Field>,
}

impl ObjectUpdate {
    /// Returns an update of `name` with no type and no attributes, to fill in.
    pub fn new(name: impl Into<String>, time: i64) -> Self {
        ObjectUpdate {
            name: name.into(),
            type_name: None,
            time,
            attributes: Vec::new(),
        }
    }

    /// Sets the type.
    pub fn with_type(mut self, type_name: impl Into<String>) -> Self {
        self.type_name = Some(type_name.into());
        self
    }

    /// Adds an attribute value.
    pub fn with(mut self, attribute: impl Into<String>, value: impl Into<Value>) -> Self {
        self.attributes.push((attribute.into(), value.into()));
        self
    }
}

/// What a change did to an object: the reason a subscriber is told.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    /// The object is new.
    Created,
    /// An existing object changed.
    Updated,
    /// The object is gone.
    Deleted,
}

impl Change {
    /// Returns `created`, `updated` or `deleted`.
    pub fn name(self) -> &'static str {
        match self {
            Change::Created => "created",
            Change::Updated => "updated",
            Change::Deleted => "deleted",
        }
    }
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> InfoObject {
        InfoObject {
            name: "RunParams.RunInfo".into(),
            type_name: "RunInfo".into(),
            time: 5,
            version: 3,
            attributes: vec![("run".into(), Value::Int(42))],
        }
    }

    #[test]
    fn encodes_like_the_wire_form() {
        let mut direct = Vec::new();
        object().encode(&mut direct);
        let mut via_data = Vec::new();
        ObjectData::from(object()).encode(&mut via_data);
        assert_eq!(direct, via_data);
        let decoded = ObjectData::decode(&mut msgpack::Reader::new(&direct)).unwrap();
        assert_eq!(InfoObject::from(decoded), object());
    }

    #[test]
    fn accessors_and_names() {
        assert_eq!(object().attribute("run"), Some(&Value::Int(42)));
        assert_eq!(object().attribute("nope"), None);
        assert_eq!(object().namespace(), "RunParams");
        assert_eq!(Change::Deleted.to_string(), "deleted");
        let update = ObjectUpdate::new("A.b", 1).with_type("T").with("x", 1.5);
        assert_eq!(update.attributes, vec![("x".into(), Value::Float(1.5))]);
    }

    #[test]
    fn memory_note_matches_the_layout() {
        if cfg!(target_pointer_width = "64") {
            assert_eq!(std::mem::size_of::<InfoObject>(), 88);
            assert_eq!(std::mem::size_of::<Field>(), 56);
        }
    }
}
