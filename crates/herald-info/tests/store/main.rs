//! The store against real files: update semantics, persistence and recovery, and a model test
//! against a `BTreeMap` (as redb's `fuzz_redb.rs` does).

mod model;
mod persistence;
mod semantics;

use std::path::Path;

use herald_info::{
    AttrType, AttributeDef, FsyncPolicy, InfoObject, InfoStore, ObjectUpdate, Selection,
    StoreOptions, TypeDef, UpdateMode,
};
use herald_proto::Value;

/// `Run { run: u32, beam: double, comment: string }`, `CalibRun: Run { gain: float }` and
/// `Magnet { current: double, on: bool }`.
pub fn types() -> Vec<TypeDef> {
    let attribute = |name: &str, attr_type: AttrType| AttributeDef::new(name, attr_type, "");
    let mut run = TypeDef::new("Run");
    run.description = "a run".into();
    run.attributes = vec![
        attribute("run", AttrType::U32),
        attribute("beam", AttrType::Double),
        attribute("comment", AttrType::String),
    ];
    let mut calib = TypeDef::new("CalibRun");
    calib.base = Some("Run".into());
    calib.attributes = vec![attribute("gain", AttrType::Float)];
    let mut magnet = TypeDef::new("Magnet");
    magnet.attributes = vec![
        attribute("current", AttrType::Double),
        attribute("on", AttrType::Bool),
    ];
    vec![run, calib, magnet]
}

/// Options that never fsync, so tests run fast.
pub fn quick_options() -> StoreOptions {
    StoreOptions {
        fsync: FsyncPolicy::Never,
        ..StoreOptions::default()
    }
}

/// Opens a store in `dir` with the test types declared.
pub fn open_with_types(dir: &Path, options: StoreOptions) -> InfoStore {
    let mut store = InfoStore::open(dir, options).unwrap();
    for def in types() {
        store.declare_type(def).unwrap();
    }
    store
}

/// A complete `Run` object.
pub fn run_update(name: &str, run: i64, time: i64) -> ObjectUpdate {
    ObjectUpdate::new(name, time)
        .with_type("Run")
        .with("run", run)
        .with("beam", 3.5)
        .with("comment", "physics")
}

/// Creates `name` as a `Run`.
pub fn create_run(store: &mut InfoStore, name: &str, run: i64) -> InfoObject {
    store
        .update(run_update(name, run, 100), UpdateMode::Create)
        .unwrap()
        .0
}

/// Everything observable about a store's contents.
#[derive(Debug, PartialEq)]
pub struct State {
    pub objects: Vec<InfoObject>,
    pub types: Vec<TypeDef>,
}

pub fn state(store: &InfoStore) -> State {
    State {
        objects: store.list(&Selection::all()).into_iter().cloned().collect(),
        types: store.types().into_iter().cloned().collect(),
    }
}

/// Shorthand for an integer value.
pub fn int(value: i64) -> Value {
    Value::Int(value)
}
