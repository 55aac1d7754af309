//! Random operations applied to the store and to a plain `BTreeMap` model must agree, before
//! and after reopening and compacting (redb's `fuzz_redb.rs` approach).

use std::collections::BTreeMap;
use std::path::Path;

use herald_info::{Change, InfoObject, InfoStore, ObjectUpdate, StoreOptions, UpdateMode};
use herald_proto::Value;
use proptest::prelude::*;

use crate::{open_with_types, quick_options, state};

const NAMES: [&str; 4] = ["A.one", "A.two", "B.three", "Malformed"];
const TYPES: [&str; 4] = ["Run", "CalibRun", "Magnet", "Undeclared"];
const ATTRIBUTES: [&str; 6] = ["run", "beam", "comment", "gain", "current", "on"];

/// The model's view of the test types: attribute names in order, with what each accepts.
fn type_attributes(type_name: &str) -> Option<Vec<&'static str>> {
    let attributes = match type_name {
        "Run" => vec!["run", "beam", "comment"],
        "CalibRun" => vec!["run", "beam", "comment", "gain"],
        "Magnet" => vec!["current", "on"],
        _ => return None,
    };
    Some(attributes)
}

/// Whether `value` is acceptable for `attribute`, and the value the store keeps.
fn accept(attribute: &str, value: &Value) -> Option<Value> {
    match (attribute, value) {
        ("run", Value::Int(v)) if (0..=i64::from(u32::MAX)).contains(v) => Some(value.clone()),
        ("beam" | "gain" | "current", Value::Float(_)) => Some(value.clone()),
        ("beam" | "gain" | "current", Value::Int(v)) => Some(Value::Float(*v as f64)),
        ("comment", Value::Str(_)) | ("on", Value::Bool(_)) => Some(value.clone()),
        _ => None,
    }
}

fn value_pool() -> [Value; 5] {
    [
        Value::Int(-1),
        Value::Int(7),
        Value::Float(2.5),
        Value::from("x"),
        Value::Bool(true),
    ]
}

#[derive(Debug, Clone)]
enum Op {
    Update {
        name: usize,
        type_name: Option<usize>,
        /// Start from a valid value for every attribute of `type_name` that `extra` does not set.
        fill: bool,
        extra: Vec<(usize, usize)>,
        mode: UpdateMode,
    },
    Delete {
        name: usize,
    },
    Reopen,
    Compact,
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let mode = prop_oneof![
        1 => Just(UpdateMode::Create),
        1 => Just(UpdateMode::Update),
        2 => Just(UpdateMode::Upsert)
    ];
    let type_name = prop_oneof![
        3 => Just(None),
        6 => (0..TYPES.len() - 1).prop_map(Some),
        1 => Just(Some(TYPES.len() - 1)),
    ];
    // Value index `value_pool().len()` stands for a valid value of the attribute.
    let value = prop_oneof![1 => 0..value_pool().len(), 2 => Just(value_pool().len())];
    let update = (
        0..NAMES.len(),
        type_name,
        proptest::bool::weighted(0.7),
        proptest::collection::vec((0..ATTRIBUTES.len(), value), 0..2),
        mode,
    )
        .prop_map(|(name, type_name, fill, extra, mode)| Op::Update {
            name,
            type_name,
            fill,
            extra,
            mode,
        });
    prop_oneof![
        8 => update,
        2 => (0..NAMES.len()).prop_map(|name| Op::Delete { name }),
        1 => Just(Op::Reopen),
        1 => Just(Op::Compact),
    ]
}

/// A value every store must accept for `attribute`.
fn valid_value(attribute: &str) -> Value {
    match attribute {
        "run" | "gain" | "current" => Value::Int(7),
        "beam" => Value::Float(2.5),
        "comment" => Value::from("x"),
        _ => Value::Bool(true),
    }
}

/// Builds the update an `Op::Update` stands for.
fn build_update(
    name: usize,
    type_name: Option<usize>,
    fill: bool,
    extra: &[(usize, usize)],
    time: i64,
) -> ObjectUpdate {
    let mut update = ObjectUpdate::new(NAMES[name], time);
    update.type_name = type_name.map(|t| TYPES[t].to_string());
    if fill {
        let filled = type_name
            .and_then(|t| type_attributes(TYPES[t]))
            .unwrap_or_default();
        // Attributes the extras set are left to them, so extras change values more often
        // than they repeat names (which `extra` alone still does now and then).
        let in_extra = |attribute: &str| extra.iter().any(|&(a, _)| ATTRIBUTES[a] == attribute);
        for attribute in filled.into_iter().filter(|a| !in_extra(a)) {
            update
                .attributes
                .push((attribute.to_string(), valid_value(attribute)));
        }
    }
    for &(attribute, value) in extra {
        let name = ATTRIBUTES[attribute];
        let value = value_pool()
            .get(value)
            .cloned()
            .unwrap_or_else(|| valid_value(name));
        update.attributes.push((name.to_string(), value));
    }
    update
}

/// The attributes `update` sets on an object of `type_name`, as the store keeps them, or
/// `None` if the store must refuse them.
fn checked(type_name: &str, update: &ObjectUpdate, complete: bool) -> Option<Vec<(String, Value)>> {
    let declared = type_attributes(type_name)?;
    let mut kept = Vec::new();
    for (index, (name, value)) in update.attributes.iter().enumerate() {
        let repeated = update.attributes[..index].iter().any(|(n, _)| n == name);
        if repeated || !declared.contains(&name.as_str()) {
            return None;
        }
        kept.push((name.clone(), accept(name, value)?));
    }
    if complete && declared.len() != kept.len() {
        return None;
    }
    Some(kept)
}

fn order(type_name: &str, attributes: &mut [(String, Value)]) {
    let declared = type_attributes(type_name).unwrap_or_default();
    attributes.sort_by_key(|(name, _)| declared.iter().position(|d| d == name));
}

/// Applies an update to the model; `None` where the store must refuse it.
fn model_update(
    model: &BTreeMap<String, InfoObject>,
    update: &ObjectUpdate,
    mode: UpdateMode,
) -> Option<(InfoObject, Change)> {
    match (model.get(&update.name), mode) {
        (Some(_), UpdateMode::Create) | (None, UpdateMode::Update) => None,
        (None, _) => {
            let type_name = update.type_name.clone()?;
            herald_info::check_name(&update.name).ok()?;
            let mut attributes = checked(&type_name, update, true)?;
            order(&type_name, &mut attributes);
            let object = InfoObject {
                name: update.name.clone(),
                type_name,
                time: update.time,
                version: 1,
                attributes,
            };
            Some((object, Change::Created))
        }
        (Some(current), _) => {
            if update
                .type_name
                .as_ref()
                .is_some_and(|t| *t != current.type_name)
            {
                return None;
            }
            let mut object = current.clone();
            for (name, value) in checked(&current.type_name, update, false)? {
                match object.attributes.iter_mut().find(|(n, _)| *n == name) {
                    Some((_, held)) => *held = value,
                    None => object.attributes.push((name, value)),
                }
            }
            order(&current.type_name, &mut object.attributes);
            object.time = update.time;
            object.version += 1;
            Some((object, Change::Updated))
        }
    }
}

fn run(ops: &[Op], options: &StoreOptions, dir: &Path) {
    let mut store = open_with_types(dir, options.clone());
    let mut model: BTreeMap<String, InfoObject> = BTreeMap::new();
    for (index, op) in ops.iter().enumerate() {
        let time = index as i64;
        match op {
            Op::Update {
                name,
                type_name,
                fill,
                extra,
                mode,
            } => {
                let update = build_update(*name, *type_name, *fill, extra, time);
                let expected = model_update(&model, &update, *mode);
                let found = store.update(update.clone(), *mode);
                match (&expected, &found) {
                    (Some(expected), Ok(found)) => assert_eq!(expected, found, "{op:?}"),
                    (None, Err(_)) => {}
                    _ => panic!("{op:?}: model {expected:?}, store {found:?}"),
                }
                if let Some((object, _)) = expected {
                    model.insert(object.name.clone(), object);
                }
            }
            Op::Delete { name } => {
                let expected = model.remove(NAMES[*name]).map(|mut object| {
                    object.version += 1;
                    object.time = time;
                    object
                });
                let found = store.delete(NAMES[*name], time).ok();
                assert_eq!(found, expected, "{op:?}");
            }
            Op::Reopen => {
                drop(store);
                store = InfoStore::open(dir, options.clone()).unwrap();
                assert_eq!(store.recovery().torn_tail_bytes, 0);
            }
            Op::Compact => store.compact().unwrap(),
        }
        let objects: Vec<InfoObject> = model.values().cloned().collect();
        assert_eq!(state(&store).objects, objects, "after {op:?}");
    }
    let expected = state(&store);
    drop(store);
    let store = InfoStore::open(dir, options.clone()).unwrap();
    assert_eq!(state(&store), expected);
    assert_eq!(store.types().len(), 3);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn store_agrees_with_a_btreemap_model(
        ops in proptest::collection::vec(op_strategy(), 1..40),
        small_log in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let options = StoreOptions {
            compact_after_bytes: if small_log { 200 } else { 1 << 20 },
            ..quick_options()
        };
        run(&ops, &options, dir.path());
    }
}
