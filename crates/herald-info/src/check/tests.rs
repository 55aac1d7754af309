use super::*;
use crate::type_def::TypeDef;

fn registry() -> TypeRegistry {
    let mut registry = TypeRegistry::new();
    let all_scalars = [
        "bool", "s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "float", "double", "string",
        "time", "bytes",
    ];
    let mut scalars = TypeDef::new("Scalars");
    for name in all_scalars {
        scalars.attributes.push(AttributeDef::new(
            format!("a_{name}"),
            name.parse().unwrap(),
            "",
        ));
    }
    registry.declare(scalars).unwrap();
    let mut beam = TypeDef::new("Beam");
    beam.attributes = vec![
        AttributeDef::new("energy", AttrType::Double, "GeV"),
        AttributeDef::new("particle", AttrType::String, ""),
    ];
    registry.declare(beam).unwrap();
    let mut fill = TypeDef::new("Fill");
    fill.attributes = vec![
        AttributeDef::new("number", AttrType::U32, ""),
        AttributeDef::new("main", "Beam".parse().unwrap(), ""),
        AttributeDef::new("beams", "array<Beam>".parse().unwrap(), ""),
        AttributeDef::new("gains", "array<array<float>>".parse().unwrap(), ""),
    ];
    registry.declare(fill).unwrap();
    let mut long_fill = TypeDef::new("LongFill");
    long_fill.base = Some("Fill".into());
    long_fill.attributes = vec![AttributeDef::new("hours", AttrType::Double, "")];
    registry.declare(long_fill).unwrap();
    registry
}

fn one(attribute: &str, value: Value) -> Result<(), InfoError> {
    registry().check("Scalars", &[(format!("a_{attribute}"), value)], false)
}

#[test]
fn every_scalar_type_accepts_its_value() {
    let cases = [
        ("bool", Value::Bool(true)),
        ("s8", Value::Int(-128)),
        ("u8", Value::Int(255)),
        ("s16", Value::Int(-32768)),
        ("u16", Value::Int(65535)),
        ("s32", Value::Int(i64::from(i32::MIN))),
        ("u32", Value::Int(i64::from(u32::MAX))),
        ("s64", Value::Int(i64::MIN)),
        ("u64", Value::Int(i64::MAX)),
        ("u64", Value::UInt(u64::MAX)),
        ("double", Value::UInt(u64::MAX)),
        ("float", Value::Float(1.5)),
        ("float", Value::Float(f64::NAN)),
        ("float", Value::Float(f64::INFINITY)),
        ("float", Value::Int(3)),
        ("double", Value::Float(1e300)),
        ("double", Value::Int(-7)),
        ("string", Value::from("text")),
        ("time", Value::Time(1_763_604_000_000_000_000)),
        ("bytes", Value::Bytes(vec![0, 1])),
    ];
    for (attribute, value) in cases {
        one(attribute, value.clone()).unwrap_or_else(|err| panic!("{attribute} {value:?}: {err}"));
    }
}

#[test]
fn integers_outside_their_range_are_refused() {
    let cases = [
        ("s8", -129),
        ("s8", 128),
        ("u8", -1),
        ("u8", 256),
        ("s16", -32769),
        ("u16", 65536),
        ("s32", i64::from(i32::MAX) + 1),
        ("u32", -1),
        ("u32", i64::from(u32::MAX) + 1),
        ("u64", -1),
    ];
    for (attribute, value) in cases {
        let err = one(attribute, Value::Int(value)).unwrap_err();
        assert!(
            matches!(err, InfoError::OutOfRange { .. }),
            "{attribute} {value}: {err}"
        );
    }
    assert_eq!(
        one("u8", Value::Int(300)).unwrap_err().to_string(),
        "attribute `a_u8` of type `Scalars`: value `300` is out of range for u8 (0..=255)"
    );
    for attribute in ["s64", "u32"] {
        let err = one(attribute, Value::UInt(u64::MAX)).unwrap_err();
        assert!(err.to_string().contains("18446744073709551615"), "{err}");
    }
    let err = one("float", Value::Float(1e39)).unwrap_err();
    assert!(matches!(err, InfoError::OutOfRange { .. }), "{err}");
}

#[test]
fn wrong_value_types_are_refused() {
    let cases = [
        ("bool", Value::Int(1)),
        ("s32", Value::Float(1.0)),
        ("s32", Value::from("1")),
        ("u64", Value::Bool(true)),
        ("double", Value::from("1.5")),
        ("string", Value::Int(1)),
        ("time", Value::Int(1)),
        ("bytes", Value::from("x")),
        ("string", Value::Array(vec![])),
        ("s8", Value::Map(vec![])),
    ];
    for (attribute, value) in cases {
        let err = one(attribute, value.clone()).unwrap_err();
        assert!(
            matches!(err, InfoError::WrongType { .. }),
            "{attribute} {value:?}: {err}"
        );
    }
    assert_eq!(
        one("s32", Value::from("abc")).unwrap_err().to_string(),
        "attribute `a_s32` of type `Scalars` expects s32, found string `abc`"
    );
}

fn beam(energy: Value) -> Value {
    Value::Map(vec![
        ("energy".into(), energy),
        ("particle".into(), Value::from("e-")),
    ])
}

fn fill() -> Vec<Field> {
    vec![
        ("number".into(), Value::Int(7)),
        ("main".into(), beam(Value::Float(3.0))),
        ("beams".into(), Value::Array(vec![beam(Value::Int(3))])),
        (
            "gains".into(),
            Value::Array(vec![Value::Array(vec![Value::Float(0.5), Value::Int(1)])]),
        ),
    ]
}

#[test]
fn arrays_and_nested_values_are_checked_inside() {
    let registry = registry();
    registry.check("Fill", &fill(), true).unwrap();

    let mut bad = fill();
    bad[2].1 = Value::Array(vec![beam(Value::Float(1.0)), beam(Value::from("high"))]);
    assert_eq!(
        registry.check("Fill", &bad, true).unwrap_err().to_string(),
        "attribute `beams[1].energy` of type `Fill` expects double, found string `high`"
    );

    let mut bad = fill();
    bad[1].1 = Value::Map(vec![("energy".into(), Value::Float(1.0))]);
    assert_eq!(
        registry.check("Fill", &bad, false).unwrap_err().to_string(),
        "missing attribute `main.particle` of type `Fill` (every attribute is required here)"
    );

    let mut bad = fill();
    bad[3].1 = Value::Array(vec![Value::Float(1.0)]);
    let err = registry.check("Fill", &bad, true).unwrap_err();
    assert!(err.to_string().contains("`gains[0]`"), "{err}");

    let mut bad = fill();
    bad[1].1 = Value::Array(vec![]);
    let err = registry.check("Fill", &bad, true).unwrap_err();
    assert!(
        err.to_string()
            .contains("expects Beam, found an array of 0 values"),
        "{err}"
    );
}

#[test]
fn unknown_missing_and_repeated_attributes() {
    let registry = registry();
    let err = registry
        .check("Fill", &[("nubmer".into(), Value::Int(1))], false)
        .unwrap_err();
    assert_eq!(err.to_string(), "type `Fill` has no attribute `nubmer`");

    let err = registry
        .check("Fill", &[("number".into(), Value::Int(1))], true)
        .unwrap_err();
    assert!(matches!(err, InfoError::MissingAttribute { .. }), "{err}");
    registry
        .check("Fill", &[("number".into(), Value::Int(1))], false)
        .unwrap();

    let twice = [
        ("number".into(), Value::Int(1)),
        ("number".into(), Value::Int(2)),
    ];
    let err = registry.check("Fill", &twice, false).unwrap_err();
    assert_eq!(
        err.to_string(),
        "bad attribute `number` of type `Fill`: it is given twice"
    );

    let err = registry.check("Nope", &[], false).unwrap_err();
    assert_eq!(err.to_string(), "unknown type `Nope` (declare it first)");
}

#[test]
fn subtypes_have_inherited_attributes() {
    let registry = registry();
    let mut long = fill();
    long.push(("hours".into(), Value::Float(12.0)));
    registry.check("LongFill", &long, true).unwrap();
    let err = registry.check("LongFill", &fill(), true).unwrap_err();
    assert!(err.to_string().contains("`hours`"), "{err}");
    let err = registry.check("Fill", &long, true).unwrap_err();
    assert!(matches!(err, InfoError::UnknownAttribute { .. }), "{err}");
}

#[test]
fn normalize_orders_attributes_and_makes_floats() {
    let registry = registry();
    let mut given: Vec<Field> = fill().into_iter().rev().collect();
    given.insert(0, ("hours".into(), Value::Int(2)));
    registry.normalize("LongFill", &mut given);
    let names: Vec<&str> = given.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names, ["number", "main", "beams", "gains", "hours"]);
    assert_eq!(given[4].1, Value::Float(2.0));
    assert_eq!(given[0].1, Value::Int(7), "u32 stays an integer");
    assert_eq!(given[2].1, Value::Array(vec![beam(Value::Float(3.0))]));
    assert_eq!(
        given[3].1,
        Value::Array(vec![Value::Array(vec![
            Value::Float(0.5),
            Value::Float(1.0)
        ])])
    );
}
