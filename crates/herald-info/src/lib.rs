//! Herald's information objects: types declared at run time, selections, and the store that
//! keeps the latest value of every object on disk.
//!
//! An information object is a named (`Namespace.Object`), typed value — typed attributes, a
//! producer's timestamp and a version — whose latest state everyone can read and watch
//! (DESIGN.md §1). This crate holds the rules and the store; it does no networking and starts
//! no runtime. The server turns each change into a record of kind `info`.
//!
//! # Layout
//! - [`attr_type`]: [`AttrType`], an attribute's type (`u32`, `array<double>`, a type name).
//! - [`type_def`]: [`TypeDef`] and [`AttributeDef`], a declared type.
//! - [`registry`]: [`TypeRegistry`], declared types and inheritance (`is_a`, `attributes`).
//! - [`check`]: [`TypeRegistry::check`] and [`TypeRegistry::normalize`], values against types.
//! - [`name`]: [`check_name`] and the rules for object, type and attribute names.
//! - [`object`]: [`InfoObject`], [`ObjectUpdate`], [`UpdateMode`] and [`Change`].
//! - [`type_selection`], [`selection`]: [`TypeSelection`] (`T`, `T+`, `!T`, `!T+`) and
//!   [`Selection`] (name regex and/or types, combined with [`Combine`]).
//! - [`store`]: [`InfoStore`], the latest values and types, persisted.
//! - [`options`]: [`StoreOptions`] and [`FsyncPolicy`].
//! - [`persist`]: the snapshot and log format, byte by byte.
//! - [`json`], [`xml`]: the JSON form of objects, types and values (both ways, guided by the
//!   type) and the Information Service's XML form of an object; the HTTP API and the CLI
//!   share them.
//! - [`csv`]: the CSV form of archived records and buckets, for the HTTP API and the CLI.
//! - [`error`]: [`InfoError`], what can go wrong, each message quoting the value.
//!
//! # Example
//! ```
//! use herald_info::{AttrType, AttributeDef, InfoStore, ObjectUpdate, Selection, StoreOptions,
//!                   TypeDef, UpdateMode};
//!
//! let dir = tempfile::tempdir().unwrap();
//! let mut store = InfoStore::open(dir.path(), StoreOptions::default()).unwrap();
//! let mut run_info = TypeDef::new("RunInfo");
//! run_info.attributes.push(AttributeDef::new("run", AttrType::U32, "run number"));
//! run_info.attributes.push(AttributeDef::new("beam", AttrType::Double, "beam energy, GeV"));
//! store.declare_type(run_info).unwrap();
//!
//! let update = ObjectUpdate::new("RunParams.RunInfo", herald_proto::time::now_nanos())
//!     .with_type("RunInfo")
//!     .with("run", 42)
//!     .with("beam", 7);
//! let (object, change) = store.update(update, UpdateMode::Create).unwrap();
//! assert_eq!((object.version, change.name()), (1, "created"));
//! assert_eq!(object.attribute("beam"), Some(&herald_proto::Value::Float(7.0)));
//!
//! let err = store
//!     .update(ObjectUpdate::new("RunParams.RunInfo", 0).with("run", -1), UpdateMode::Update)
//!     .unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "attribute `run` of type `RunInfo`: value `-1` is out of range for u32 (0..=4294967295)"
//! );
//! drop(store);
//!
//! let store = InfoStore::open(dir.path(), StoreOptions::default()).unwrap();
//! let selection = Selection::new(Some(r"RunParams\..*"), Some("RunInfo+"), Default::default())
//!     .unwrap();
//! assert_eq!(store.list(&selection).len(), 1);
//! ```
#![deny(missing_docs)]

pub mod acs_xml;
pub mod attr_type;
pub mod check;
pub mod csv;
pub mod error;
pub mod json;
pub mod name;
pub mod object;
pub mod options;
pub mod persist;
pub mod registry;
pub mod selection;
pub mod store;
pub mod type_def;
pub mod type_selection;
pub mod xml;

pub use attr_type::AttrType;
pub use error::InfoError;
pub use name::check_name;
pub use object::{Change, InfoObject, ObjectUpdate, UpdateMode};
pub use options::{FsyncPolicy, StoreOptions};
pub use registry::TypeRegistry;
pub use selection::{Combine, Selection};
pub use store::{InfoStore, Recovery};
pub use type_def::{AttributeDef, TypeDef};
pub use type_selection::{TypeMode, TypeSelection};

#[cfg(test)]
mod tests {
    /// The server shares the store and selections between tasks.
    #[test]
    fn shared_types_can_cross_threads() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<crate::InfoStore>();
        assert_send_sync::<crate::Selection>();
        assert_send_sync::<crate::TypeRegistry>();
        assert_send_sync::<crate::InfoError>();
    }
}
