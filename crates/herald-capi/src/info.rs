//! Information objects: declare a type, set, get, delete, list and subscribe. An object is
//! a record of kind info: subject its name, type its type, fields its attributes, `id` in
//! its view its version, and (in a subscription) text why it changed.

use std::ffi::{c_char, c_int, c_void};

use herald_proto::info::{AttributeData, ObjectData, SelectionData, TypeData, UpdateMode};
use herald_proto::{Kind, Record};

use crate::client::{borrow, herald_client};
use crate::out::{self, give};
use crate::record::{borrow as record, herald_record};
use crate::runtime::block;
use crate::status::{guard, Failure, HERALD_E_NOT_FOUND};
use crate::strings::{optional, required};
use crate::subscribe::{herald_callback, herald_subscription, subscribed};

/// Set: only a new object; every attribute must be given.
pub const HERALD_INFO_CREATE: c_int = 0;
/// Set: only an existing object; the given attributes replace those values.
pub const HERALD_INFO_UPDATE: c_int = 1;
/// Set: create or update.
pub const HERALD_INFO_UPSERT: c_int = 2;

/// Called for each object `herald_info_list` finds; `object` is valid until it returns.
/// Return 0 to go on, anything else to stop.
pub type herald_object_fn =
    Option<unsafe extern "C" fn(object: *const herald_record, user_data: *mut c_void) -> c_int>;

fn object_record(object: ObjectData) -> Box<herald_record> {
    let record = Record {
        type_name: object.type_name,
        time: object.time,
        fields: object.attributes,
        id: Some(object.version),
        ..Record::new(Kind::Info, object.name)
    };
    herald_record::boxed(record, 0, 0)
}

/// Declares type `name` (with base type `base`, NULL for none) whose own attributes are
/// `attributes`: `"name:type, name:type"` with the types `bool`, `s8` … `u64`, `float`,
/// `double`, `string`, `time`, `bytes`, `array<T>` or another type's name. Declaring the
/// same type again is fine.
///
/// # Safety
/// `c` is NULL or a live client; the strings NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_info_declare(
    c: *const herald_client,
    name: *const c_char,
    base: *const c_char,
    attributes: *const c_char,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, name, base, spec) = unsafe {
            (
                borrow(c)?,
                required(name, "name")?,
                optional(base, "base")?,
                required(attributes, "attributes")?,
            )
        };
        let mut declared = Vec::new();
        for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (attribute, attr_type) = part.split_once(':').ok_or_else(|| {
                Failure::invalid(format!("attribute `{part}` is not `name:type`"))
            })?;
            declared.push(AttributeData {
                name: attribute.trim().to_string(),
                attr_type: attr_type.trim().to_string(),
                description: String::new(),
            });
        }
        let data = TypeData {
            name: name.to_string(),
            base: base.map(str::to_string),
            description: String::new(),
            attributes: declared,
        };
        Ok(block(c.client.declare_type(data))??)
    })
}

/// Creates or changes the object `object` describes (subject: its name; type: its type,
/// empty to keep it; fields: the attributes to set), as `mode` says (`HERALD_INFO_CREATE`,
/// `HERALD_INFO_UPDATE` or `HERALD_INFO_UPSERT`). With `out` not NULL, stores the object as
/// it is after the change (with its new version) there.
///
/// # Safety
/// `c` is NULL or a live client; `object` NULL or a live record; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_info_set(
    c: *const herald_client,
    object: *const herald_record,
    mode: c_int,
    out: *mut *mut herald_record,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, object) = unsafe { (borrow(c)?, record(object)?) };
        let mode = match mode {
            HERALD_INFO_CREATE => UpdateMode::Create,
            HERALD_INFO_UPDATE => UpdateMode::Update,
            HERALD_INFO_UPSERT => UpdateMode::Upsert,
            _ => {
                return Err(Failure::invalid(format!(
                "mode {mode} is not HERALD_INFO_CREATE, HERALD_INFO_UPDATE or HERALD_INFO_UPSERT"
            )))
            }
        };
        let object = &object.record;
        let type_name = (!object.type_name.is_empty()).then_some(object.type_name.as_str());
        let after =
            block(
                c.client
                    .set_info(&object.subject, type_name, object.fields.clone(), mode),
            )??;
        if out.is_null() {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        unsafe { give(out, object_record(after)) }
    })
}

/// Reads object `name` into `*out` (free it with `herald_record_free`);
/// `HERALD_E_NOT_FOUND` when there is no such object.
///
/// # Safety
/// `c` is NULL or a live client; `name` NULL or NUL-terminated; `out` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn herald_info_get(
    c: *const herald_client,
    name: *const c_char,
    out: *mut *mut herald_record,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, name) = unsafe { (borrow(c)?, required(name, "name")?) };
        out::check(out)?;
        let object = block(c.client.get_info(name))??
            .ok_or_else(|| Failure::new(HERALD_E_NOT_FOUND, format!("no object `{name}`")))?;
        // SAFETY: the caller's contract.
        unsafe { give(out, object_record(object)) }
    })
}

/// Deletes object `name`; `HERALD_E_SERVER` (`bad_info`) if there is none.
///
/// # Safety
/// `c` is NULL or a live client; `name` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn herald_info_delete(c: *const herald_client, name: *const c_char) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let (c, name) = unsafe { (borrow(c)?, required(name, "name")?) };
        block(c.client.delete_info(name))??;
        Ok(())
    })
}

/// The selection of objects from C: a regular expression over whole names and a type
/// selection (`T`, `T+` with subtypes, `!T`), NULL for either leaving it open.
fn selection(name_regex: *const c_char, types: *const c_char) -> Result<SelectionData, Failure> {
    // SAFETY: the caller of the C function's contract (NULL or NUL-terminated).
    let (name_regex, types) = unsafe {
        (
            optional(name_regex, "name_regex")?,
            optional(types, "types")?,
        )
    };
    Ok(SelectionData {
        name_regex: name_regex.map(str::to_string),
        types: types.map(str::to_string),
        any: false,
    })
}

/// Calls `each` with every object whose name matches the regular expression `name_regex`
/// and whose type matches `types` (NULL: any), by name, on the calling thread, until it
/// returns non-zero.
///
/// # Safety
/// `c` is NULL or a live client; the strings NULL or NUL-terminated; `each` a function.
#[no_mangle]
pub unsafe extern "C" fn herald_info_list(
    c: *const herald_client,
    name_regex: *const c_char,
    types: *const c_char,
    each: herald_object_fn,
    user_data: *mut c_void,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let each = each.ok_or_else(|| Failure::invalid("each is NULL"))?;
        let objects = block(c.client.list_info(selection(name_regex, types)?))??;
        for object in objects {
            let object = object_record(object);
            // SAFETY: the program's function, called as documented.
            if unsafe { each(&*object, user_data) } != 0 {
                break;
            }
        }
        Ok(())
    })
}

/// Subscribes to the objects the selection matches (as `herald_info_list`): first each
/// one's current value (text `snapshot`), then every change (`created`, `updated`,
/// `deleted`), none lost or repeated between the two, as records of kind info. Callback
/// and polling as `herald_subscribe`.
///
/// # Safety
/// As `herald_subscribe`.
#[no_mangle]
pub unsafe extern "C" fn herald_info_subscribe(
    c: *const herald_client,
    name_regex: *const c_char,
    types: *const c_char,
    callback: herald_callback,
    user_data: *mut c_void,
    out: *mut *mut herald_subscription,
) -> c_int {
    guard(|| {
        // SAFETY: the caller's contract.
        let c = unsafe { borrow(c) }?;
        let selection = selection(name_regex, types)?;
        // SAFETY: the caller's contract.
        unsafe { subscribed(c.client.subscribe_info(selection), callback, user_data, out) }
    })
}
