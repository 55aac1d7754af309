//! Create, update, upsert and delete: results, versions, and errors that change nothing.

use herald_info::{Change, InfoError, InfoStore, ObjectUpdate, Selection, TypeDef, UpdateMode};
use herald_proto::Value;

use crate::{create_run, int, open_with_types, quick_options, run_update, state, types};

fn store() -> (tempfile::TempDir, InfoStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_with_types(dir.path(), quick_options());
    (dir, store)
}

#[test]
fn create_starts_at_version_one_in_type_order() {
    let (_dir, mut store) = store();
    let update = ObjectUpdate::new("RunParams.RunInfo", 7)
        .with_type("Run")
        .with("comment", "x")
        .with("beam", 2)
        .with("run", 42);
    let (object, change) = store.update(update, UpdateMode::Create).unwrap();
    assert_eq!(change, Change::Created);
    assert_eq!((object.version, object.time), (1, 7));
    let names: Vec<&str> = object.attributes.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["run", "beam", "comment"]);
    assert_eq!(object.attribute("beam"), Some(&Value::Float(2.0)));
    assert_eq!(store.get("RunParams.RunInfo"), Some(&object));
    assert_eq!(store.len(), 1);
}

#[test]
fn update_merges_given_attributes_and_increments_the_version() {
    let (_dir, mut store) = store();
    create_run(&mut store, "RunParams.RunInfo", 1);
    let update = ObjectUpdate::new("RunParams.RunInfo", 200).with("run", 2);
    let (object, change) = store.update(update, UpdateMode::Update).unwrap();
    assert_eq!(change, Change::Updated);
    assert_eq!((object.version, object.time), (2, 200));
    assert_eq!(object.attribute("run"), Some(&int(2)));
    assert_eq!(object.attribute("comment"), Some(&Value::from("physics")));
    let same_type = ObjectUpdate::new("RunParams.RunInfo", 300).with_type("Run");
    let (object, _) = store.update(same_type, UpdateMode::Update).unwrap();
    assert_eq!((object.version, object.time), (3, 300));
}

#[test]
fn upsert_creates_or_updates() {
    let (_dir, mut store) = store();
    let (object, change) = store
        .update(run_update("A.b", 1, 1), UpdateMode::Upsert)
        .unwrap();
    assert_eq!((change, object.version), (Change::Created, 1));
    let (object, change) = store
        .update(
            ObjectUpdate::new("A.b", 2).with("run", 5),
            UpdateMode::Upsert,
        )
        .unwrap();
    assert_eq!((change, object.version), (Change::Updated, 2));
    let err = store
        .update(
            ObjectUpdate::new("A.c", 2).with("run", 5),
            UpdateMode::Upsert,
        )
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "object `A.c` does not exist and no type was given (creating an object needs its type)"
    );
}

#[test]
fn delete_returns_the_object_with_the_next_version() {
    let (_dir, mut store) = store();
    create_run(&mut store, "A.b", 1);
    let deleted = store.delete("A.b", 500).unwrap();
    assert_eq!((deleted.version, deleted.time), (2, 500));
    assert_eq!(deleted.attribute("run"), Some(&int(1)));
    assert_eq!(store.get("A.b"), None);
    assert!(store.is_empty());
    let err = store.delete("A.b", 501).unwrap_err();
    assert_eq!(err.to_string(), "object `A.b` does not exist");
    let (created, _) = store
        .update(run_update("A.b", 1, 600), UpdateMode::Create)
        .unwrap();
    assert_eq!(created.version, 1, "a new object starts again");
}

#[test]
fn reads_get_many_list_and_types() {
    let (_dir, mut store) = store();
    create_run(&mut store, "SR.run", 1);
    create_run(&mut store, "A.run", 2);
    let calib = run_update("B.calib", 3, 1)
        .with_type("CalibRun")
        .with("gain", 0.5);
    store.update(calib, UpdateMode::Create).unwrap();
    let many = store.get_many(&["B.calib", "Nope.x", "A.run"]);
    assert_eq!(many[0].as_ref().unwrap().type_name, "CalibRun");
    assert!(many[1].is_none());
    assert_eq!(many[2].as_ref().unwrap().attribute("run"), Some(&int(2)));
    let names = |selection: &Selection| -> Vec<String> {
        store
            .list(selection)
            .iter()
            .map(|o| o.name.clone())
            .collect()
    };
    assert_eq!(names(&Selection::all()), ["A.run", "B.calib", "SR.run"]);
    let runs = Selection::new(None, Some("Run+"), Default::default()).unwrap();
    assert_eq!(names(&runs), ["A.run", "B.calib", "SR.run"]);
    let only_run = Selection::new(Some(".*run"), Some("Run"), Default::default()).unwrap();
    assert_eq!(names(&only_run), ["A.run", "SR.run"]);
    let type_names: Vec<&str> = store.types().iter().map(|t| t.name.as_str()).collect();
    assert_eq!(type_names, ["CalibRun", "Magnet", "Run"]);
    assert!(store.registry().is_a("CalibRun", "Run"));
}

/// Every bad call returns the expected error and leaves memory and disk as they were.
#[test]
fn errors_leave_the_store_unchanged() {
    let (_dir, mut store) = store();
    create_run(&mut store, "RunParams.RunInfo", 1);
    let magnet = ObjectUpdate::new("SR.magnet", 1)
        .with_type("Magnet")
        .with("current", 1.0)
        .with("on", true);
    store.update(magnet, UpdateMode::Create).unwrap();

    let cases: Vec<(ObjectUpdate, UpdateMode, &str)> = vec![
        (
            run_update("RunParams.RunInfo", 1, 1),
            UpdateMode::Create,
            "already exists",
        ),
        (
            ObjectUpdate::new("No.such", 1).with("run", 1),
            UpdateMode::Update,
            "does not exist",
        ),
        (
            run_update("A.x", 1, 1).with_type("RunInfoo"),
            UpdateMode::Create,
            "unknown type `RunInfoo`",
        ),
        (
            run_update("RunInfo", 1, 1),
            UpdateMode::Create,
            "malformed object name `RunInfo`",
        ),
        (run_update("A.*", 1, 1), UpdateMode::Upsert, "wildcard"),
        (
            ObjectUpdate::new("A.x", 1).with_type("Run").with("run", 1),
            UpdateMode::Create,
            "missing attribute `beam`",
        ),
        (
            ObjectUpdate::new("RunParams.RunInfo", 1).with("run", "one"),
            UpdateMode::Update,
            "expects u32, found string `one`",
        ),
        (
            ObjectUpdate::new("RunParams.RunInfo", 1).with("run", -1),
            UpdateMode::Upsert,
            "out of range",
        ),
        (
            ObjectUpdate::new("RunParams.RunInfo", 1).with("gain", 1.0),
            UpdateMode::Update,
            "type `Run` has no attribute `gain`",
        ),
        (
            ObjectUpdate::new("RunParams.RunInfo", 1).with_type("CalibRun"),
            UpdateMode::Update,
            "has type `Run`, not `CalibRun`",
        ),
        (
            ObjectUpdate::new("SR.magnet", 1).with("on", 1),
            UpdateMode::Update,
            "expects bool",
        ),
    ];
    for (update, mode, needle) in cases {
        let before = state(&store);
        let log_before = store.log_bytes();
        let err = store.update(update, mode).unwrap_err();
        assert!(err.to_string().contains(needle), "{err} lacks {needle}");
        assert_eq!(state(&store), before, "after {err}");
        assert_eq!(store.log_bytes(), log_before, "after {err}");
    }

    let before = state(&store);
    let log_before = store.log_bytes();
    assert!(matches!(
        store.delete("No.such", 1),
        Err(InfoError::NotFound { .. })
    ));
    let mut changed = types()[0].clone();
    changed.attributes.pop();
    assert!(matches!(
        store.declare_type(changed),
        Err(InfoError::TypeConflict { .. })
    ));
    let mut orphan = TypeDef::new("Orphan");
    orphan.base = Some("Nope".into());
    assert!(matches!(
        store.declare_type(orphan),
        Err(InfoError::UnknownBase { .. })
    ));
    assert!(
        !store.declare_type(types()[1].clone()).unwrap(),
        "identical: not new"
    );
    assert_eq!(state(&store), before);
    assert_eq!(store.log_bytes(), log_before, "nothing written");
}

#[test]
fn a_list_read_in_pages_gives_every_selected_object_once_in_name_order() {
    let (_dir, mut store) = store();
    for n in 0..50 {
        create_run(&mut store, &format!("A.r{n:02}"), n);
        create_run(&mut store, &format!("B.r{n:02}"), n);
    }
    let only_a = Selection::new(Some("A\\..*"), None, herald_info::Combine::And).unwrap();
    let whole: Vec<String> = store.list(&only_a).iter().map(|o| o.name.clone()).collect();
    let mut paged = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        // Pages of at most 7 objects, looking at 9 at most: some pages stop at the scan
        // bound (even empty, over the B objects), and go on where they stopped.
        let (page, next) = store.list_page(&only_a, after.as_deref(), 7, 9);
        assert!(page.len() <= 7);
        paged.extend(page.iter().map(|o| o.name.clone()));
        pages += 1;
        match next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(paged, whole);
    assert_eq!(paged.len(), 50);
    assert!(pages > 50 / 7, "{pages} pages");
    let (page, next) = store.list_page(&only_a, Some("A.r49"), 7, 9);
    assert!(page.is_empty());
    assert!(next.is_some(), "the B objects are still to be looked at");
    let (page, next) = store.list_page(&Selection::all(), Some("B.r49"), 7, 9);
    assert!(page.is_empty() && next.is_none());
}
