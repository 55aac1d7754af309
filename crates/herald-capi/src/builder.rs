//! Building a record: the setters and the typed fields of a `herald_record`.

use std::ffi::{c_char, c_int};

use herald_proto::value::{Field, Value};
use herald_proto::Record;

use crate::record::{borrow_mut, check_subject, herald_record, priority_of};
use crate::status::{guard, Failure};
use crate::strings::{bytes, optional, required};
use crate::view::{
    herald_field, HERALD_ARRAY, HERALD_BOOL, HERALD_BYTES, HERALD_FLOAT, HERALD_INT, HERALD_MAP,
    HERALD_STR, HERALD_TIME, HERALD_UINT,
};

/// Deepest nesting of arrays and maps `herald_record_add_value` follows, the field's value
/// counted as level 1 as the wire's checks count it: a value and 31 levels below it are
/// sent; a deeper tree, or one whose pointers loop, is refused.
pub const HERALD_MAX_DEPTH: usize = 32;

/// Runs `change` on the record behind `r`.
///
/// # Safety
/// As [`borrow_mut`].
unsafe fn change(
    r: *mut herald_record,
    change: impl FnOnce(&mut Record) -> Result<(), Failure>,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let r = unsafe { borrow_mut(r) }?;
        r.change(change)
    })
}

/// Sets one string of the record with `set`.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
unsafe fn set_string(
    r: *mut herald_record,
    value: *const c_char,
    set: impl FnOnce(&mut Record, String),
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            set(record, required(value, "value")?.to_string());
            Ok(())
        })
    }
}

/// Sets the message type, log type or info type name.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_type(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.type_name = value) }
}

/// Sets the text.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_text(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.text = value) }
}

/// Sets the origin's free context (component, container …).
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_context(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.origin.context = value) }
}

/// Sets the origin's host name.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_host(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.origin.host = value) }
}

/// Sets the origin's process name.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_process(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.origin.process = value) }
}

/// Sets the origin's thread name.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_thread(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.origin.thread = value) }
}

/// Sets the origin's log statement id.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_log_id(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.origin.log_id = value) }
}

/// Sets the origin's URI for more information.
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_uri(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.origin.uri = value) }
}

/// Adds an audience (a record with none is for everyone).
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile; `value` is NULL or a
/// NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_audience(
    r: *mut herald_record,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { set_string(r, value, |record, value| record.audience.push(value)) }
}

/// Sets the subject (checked as the server will).
///
/// # Safety
/// As `herald_record_set_type`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_subject(
    r: *mut herald_record,
    subject: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            let subject = required(subject, "subject")?;
            check_subject(subject, "subject")?;
            record.subject = subject.to_string();
            Ok(())
        })
    }
}

/// Sets the text from `len` bytes of UTF-8 (no terminating NUL needed).
///
/// # Safety
/// `r` as for `herald_record_set_type`; `text` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_text_len(
    r: *mut herald_record,
    text: *const c_char,
    len: usize,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            record.text = crate::strings::text(text, len, "text")?.to_string();
            Ok(())
        })
    }
}

/// Sets the priority (`HERALD_TRACE` … `HERALD_EMERGENCY`).
///
/// # Safety
/// `r` is NULL or a live record used by no other thread meanwhile.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_priority(r: *mut herald_record, value: c_int) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            record.priority = priority_of(value)?;
            Ok(())
        })
    }
}

/// Sets the producer's time, ns since the Unix epoch (`herald_now()` for now).
///
/// # Safety
/// As `herald_record_set_priority`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_time(r: *mut herald_record, ns: i64) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            record.time = ns;
            Ok(())
        })
    }
}

/// Sets where in the program the record comes from: source `file`, `line` (0: unknown) and
/// `routine` (NULL leaves one as it was).
///
/// # Safety
/// `r` as for `herald_record_set_priority`; `file` and `routine` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_source(
    r: *mut herald_record,
    file: *const c_char,
    line: u64,
    routine: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            let (file, routine) = (optional(file, "file")?, optional(routine, "routine")?);
            let origin = &mut record.origin;
            if let Some(file) = file {
                origin.file = file.to_string();
            }
            origin.line = (line != 0).then_some(line);
            if let Some(routine) = routine {
                origin.routine = routine.to_string();
            }
            Ok(())
        })
    }
}

/// Sets the error stack this record belongs to: its id and the record's level in it.
///
/// # Safety
/// `r` as for `herald_record_set_priority`; `stack_id` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_stack(
    r: *mut herald_record,
    stack_id: *const c_char,
    level: u64,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            record.origin.stack_id = required(stack_id, "stack_id")?.to_string();
            record.origin.stack_level = Some(level);
            Ok(())
        })
    }
}

/// Sets this program's host, process and thread as the record's origin (as the logger
/// does for its records).
///
/// # Safety
/// As `herald_record_set_priority`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_local_origin(r: *mut herald_record) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            let local = ::herald_client::origin::local_origin();
            let origin = &mut record.origin;
            (origin.host, origin.process, origin.thread) =
                (local.host, local.process, local.thread);
            Ok(())
        })
    }
}

/// Removes every field.
///
/// # Safety
/// As `herald_record_set_priority`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_clear_fields(r: *mut herald_record) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            record.fields.clear();
            Ok(())
        })
    }
}

/// Adds field `name` with `value`.
///
/// # Safety
/// `r` as for `herald_record_set_priority`; `name` NULL or NUL-terminated.
unsafe fn add(
    r: *mut herald_record,
    name: *const c_char,
    value: impl FnOnce() -> Result<Value, Failure>,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            let name = required(name, "name")?.to_string();
            let value = value()?;
            if record.fields.iter().any(|(taken, _)| *taken == name) {
                // The server refuses such a record (`bad_record`): say so here, at once.
                return Err(Failure::invalid(format!("field `{name}` appears twice")));
            }
            record.fields.push((name, value));
            Ok(())
        })
    }
}

/// Adds a boolean field (any non-zero `value` is true).
///
/// # Safety
/// `r` as for `herald_record_set_priority`; `name` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_bool(
    r: *mut herald_record,
    name: *const c_char,
    value: c_int,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { add(r, name, || Ok(Value::Bool(value != 0))) }
}

/// Adds a signed 64-bit integer field.
///
/// # Safety
/// As `herald_record_add_bool`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_int(
    r: *mut herald_record,
    name: *const c_char,
    value: i64,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { add(r, name, || Ok(Value::Int(value))) }
}

/// Adds an unsigned 64-bit integer field (any `uint64_t`; up to `INT64_MAX` it is the
/// same as `herald_record_add_int`).
///
/// # Safety
/// As `herald_record_add_bool`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_uint(
    r: *mut herald_record,
    name: *const c_char,
    value: u64,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { add(r, name, || Ok(Value::from(value))) }
}

/// Adds a 64-bit float field.
///
/// # Safety
/// As `herald_record_add_bool`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_float(
    r: *mut herald_record,
    name: *const c_char,
    value: f64,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { add(r, name, || Ok(Value::Float(value))) }
}

/// Adds a time field, ns since the Unix epoch.
///
/// # Safety
/// As `herald_record_add_bool`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_time(
    r: *mut herald_record,
    name: *const c_char,
    ns: i64,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe { add(r, name, || Ok(Value::Time(ns))) }
}

/// Adds a string field (UTF-8, NUL-terminated).
///
/// # Safety
/// As `herald_record_add_bool`; `value` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_str(
    r: *mut herald_record,
    name: *const c_char,
    value: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        add(r, name, || {
            Ok(Value::Str(required(value, "value")?.to_string()))
        })
    }
}

/// Adds a bytes field of `len` bytes.
///
/// # Safety
/// As `herald_record_add_bool`; `value` points to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_bytes(
    r: *mut herald_record,
    name: *const c_char,
    value: *const u8,
    len: usize,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        add(r, name, || {
            Ok(Value::Bytes(bytes(value, len, "value")?.to_vec()))
        })
    }
}

/// Sets the subject a reply goes to (`herald_request` sets it itself).
///
/// # Safety
/// As `herald_record_set_type`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_reply_to(
    r: *mut herald_record,
    subject: *const c_char,
) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            let subject = required(subject, "reply_to")?;
            check_subject(subject, "reply_to")?;
            record.reply_to = Some(subject.to_string());
            Ok(())
        })
    }
}

/// Sets the correlation id of a request or reply (`herald_request` and `herald_reply` set
/// it themselves).
///
/// # Safety
/// As `herald_record_set_priority`.
#[no_mangle]
pub unsafe extern "C" fn herald_record_set_id(r: *mut herald_record, id: u64) -> c_int {
    // SAFETY: the caller's contract.
    unsafe {
        change(r, |record| {
            record.id = Some(id);
            Ok(())
        })
    }
}

/// Adds field `name` with any value, arrays and maps included: `value` is a tree of
/// `herald_field`s as `herald_record_read` gives them (`type` and its members; a map's
/// items need names, other names are not used). Nesting deeper than `HERALD_MAX_DEPTH`
/// levels, the value itself the first, is refused.
///
/// # Safety
/// `r` as for `herald_record_set_priority`; `name` NULL or NUL-terminated; `value` NULL or
/// a valid tree: each `s` points to `len` bytes, each `items` to `count` fields.
#[no_mangle]
pub unsafe extern "C" fn herald_record_add_value(
    r: *mut herald_record,
    name: *const c_char,
    value: *const herald_field,
) -> c_int {
    // SAFETY: the caller's contract. The value is level 1, as the server counts it.
    unsafe { add(r, name, || convert(value, 1)) }
}

/// The value a `herald_field` tree describes.
///
/// # Safety
/// As `herald_record_add_value`.
unsafe fn convert(field: *const herald_field, depth: usize) -> Result<Value, Failure> {
    if depth > HERALD_MAX_DEPTH {
        return Err(Failure::invalid(format!(
            "value nested deeper than {HERALD_MAX_DEPTH}"
        )));
    }
    // SAFETY: the caller's contract.
    let field = unsafe { field.as_ref() }.ok_or_else(|| Failure::invalid("value is NULL"))?;
    let items = || -> Result<&[herald_field], Failure> {
        if field.count == 0 {
            return Ok(&[]);
        }
        if field.items.is_null() {
            return Err(Failure::invalid(format!(
                "items is NULL with count {}",
                field.count
            )));
        }
        // SAFETY: `count` fields at `items` by the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts(field.items, field.count) })
    };
    Ok(match field.r#type {
        HERALD_BOOL => Value::Bool(field.i != 0),
        HERALD_INT => Value::Int(field.i),
        HERALD_UINT => Value::from(field.i as u64),
        HERALD_FLOAT => Value::Float(field.f),
        HERALD_TIME => Value::Time(field.i),
        HERALD_STR => {
            // SAFETY: `len` bytes at `s` by the caller's contract.
            let text = unsafe { crate::strings::text(field.s, field.len, "string value") }?;
            Value::Str(text.to_string())
        }
        HERALD_BYTES => {
            // SAFETY: `len` bytes at `s` by the caller's contract.
            let data = unsafe { bytes(field.s.cast(), field.len, "bytes value") }?;
            Value::Bytes(data.to_vec())
        }
        HERALD_ARRAY => Value::Array(
            items()?
                .iter()
                // SAFETY: an item of a valid tree.
                .map(|item| unsafe { convert(item, depth + 1) })
                .collect::<Result<_, _>>()?,
        ),
        HERALD_MAP => {
            let mut map: Vec<Field> = Vec::with_capacity(field.count);
            for item in items()? {
                // SAFETY: an item of a valid tree: its name NULL or NUL-terminated.
                let name = unsafe { required(item.name, "map item name") }?.to_string();
                if map.iter().any(|(taken, _)| *taken == name) {
                    return Err(Failure::invalid(format!("map item `{name}` appears twice")));
                }
                // SAFETY: an item of a valid tree.
                map.push((name, unsafe { convert(item, depth + 1) }?));
            }
            Value::Map(map)
        }
        other => {
            return Err(Failure::invalid(format!(
                "value type {other} is not HERALD_BOOL … HERALD_UINT"
            )))
        }
    })
}
