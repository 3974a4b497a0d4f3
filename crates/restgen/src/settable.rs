//! What a write takes from its body: the fields the client may set in the operation, read
//! into the operation's typed input (the allow-list: a field that is not settable there
//! has no place to land), checked, passed through the resource's hook, checked again, and
//! given back as the [`Record`] of the fields it sets.
//!
//! Most bodies go straight from their bytes into the typed input. A body goes first
//! through a JSON object where something must be done to it by name before it is typed
//! (an admin's `roles` taken out, fields the request's version lacks refused or dropped,
//! a replace's unchanged server-controlled fields ignored), and wherever the straight way
//! fails, so that every refusal is the one the object way gives.

use crate::auth::Caller;
use crate::body;
use crate::problem::{FieldError, Problem};
use crate::spec::{FieldKind, FieldSpec, ResourceSpec};
use crate::store::Record;
use crate::validate;
use crate::version::View;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::http::HeaderMap;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The write a body is read for.
pub(crate) enum Write<'a> {
    Create,
    /// `current` is the record's representation as it stands, which a GET-modify-PUT
    /// round trip sends back.
    Replace {
        current: &'a Record,
    },
    /// JSON Merge Patch: also sent as `application/merge-patch+json`.
    Patch,
}

impl Write<'_> {
    fn settable(&self, f: &FieldSpec) -> bool {
        match self {
            Write::Create => f.create,
            Write::Replace { .. } => f.replace,
            Write::Patch => f.patch,
        }
    }
}

/// The fields of the body that `T`, the operation's input type, accepted, validated,
/// passed through `hook` and validated again (a hook may change them), with an admin's
/// `roles`. Fields the request's version lacks are unknown there: refused or dropped as
/// the resource says, and whatever the input type holds for them is never applied.
pub(crate) fn read<T: DeserializeOwned + Serialize>(
    spec: &ResourceSpec,
    view: &View,
    caller: &Caller,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    write: Write<'_>,
    hook: Option<impl FnOnce(&mut T) -> Result<(), Problem>>,
) -> Result<Record, Problem> {
    let bytes = body::json(headers, body, matches!(write, Write::Patch))?;
    let by_name = matches!(write, Write::Replace { .. })
        || spec.fields.iter().any(|f| f.kind == FieldKind::Roles || !view.has(&f.gate));
    if !by_name && let Some(typed) = straight::<T>(&bytes) {
        return checked(spec, view, typed, hook);
    }
    let mut object = body::object_of(&bytes)?;
    let roles = take_roles(spec, caller, &mut object, |f| write.settable(f))?;
    if let Write::Replace { current } = write {
        // A GET-modify-PUT round trip sends the server-controlled fields back: unchanged,
        // they are ignored; changed, they fail below like any field the client may not set.
        object.retain(|k, v| {
            let client_controlled = spec.field(k).is_some_and(|f| f.replace);
            client_controlled || current.get(k) != Some(v)
        });
    }
    let outside = |name: &str| outside(spec, view, name);
    if spec.reject_unknown {
        let n = view.number().unwrap_or_default();
        let errors: Vec<FieldError> = object
            .keys()
            .filter(|k| outside(k))
            .map(|k| FieldError { field: k.clone(), message: format!("is not a field of version {n}") })
            .collect();
        if !errors.is_empty() {
            return Err(Problem::validation(errors));
        }
    }
    object.retain(|k, _| !outside(k));
    let mut input = checked(spec, view, body::typed::<T>(object)?, hook)?;
    if let Some((name, value)) = roles {
        input.insert(name, value);
    }
    Ok(input)
}

/// The body read straight into `T`, where it is a JSON object `T` accepts; `None` where
/// it is not, and the object way says why.
fn straight<T: DeserializeOwned>(bytes: &[u8]) -> Option<T> {
    // A derived struct also reads a JSON array, member by member: only an object is one.
    let object = bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
    object.then(|| serde_json::from_slice(bytes).ok()).flatten()
}

/// `typed` validated, passed through the hook and validated again, as the record of the
/// fields it sets.
fn checked<T: Serialize>(
    spec: &ResourceSpec,
    view: &View,
    mut typed: T,
    hook: Option<impl FnOnce(&mut T) -> Result<(), Problem>>,
) -> Result<Record, Problem> {
    // A hook is given valid input, and what it leaves is checked again.
    if let Some(hook) = hook {
        check(spec, &as_record(&typed)?)?;
        hook(&mut typed)?;
    }
    let mut input = as_record(&typed)?;
    input.retain(|k| !outside(spec, view, k));
    check(spec, &input)?;
    Ok(input)
}

/// Whether `name` is a field of the resource that the request's version lacks: unknown
/// there, whatever the input type holds for it.
fn outside(spec: &ResourceSpec, view: &View, name: &str) -> bool {
    spec.field(name).is_some_and(|f| !view.has(&f.gate))
}

fn as_record<T: Serialize>(typed: &T) -> Result<Record, Problem> {
    Record::from_typed(typed).map_err(|_| Problem::internal())
}

/// Every field of `input` held to its field's rules: 400 naming each one that breaks them.
pub(crate) fn check(spec: &ResourceSpec, input: &impl validate::Fields) -> Result<(), Problem> {
    let errors = validate::fields(spec.fields, input);
    if errors.is_empty() { Ok(()) } else { Err(Problem::validation(errors)) }
}

/// Admins may set a `roles` field (a declared role list) in any write; anyone else who
/// sends one where it would be settable is refused with 403. Returns the value to store.
fn take_roles(
    spec: &ResourceSpec,
    caller: &Caller,
    object: &mut Map<String, Value>,
    settable: impl Fn(&FieldSpec) -> bool,
) -> Result<Option<(String, Value)>, Problem> {
    let Some(f) = spec.fields.iter().find(|f| f.kind == FieldKind::Roles) else { return Ok(None) };
    if !object.contains_key(f.name) {
        return Ok(None);
    }
    if caller.is_admin() {
        let value = object.remove(f.name).unwrap_or(Value::Null);
        // A generated spec lists the declared roles; a derived one leaves them to the
        // service's auth.
        let declared = if f.values.is_empty() { caller.declared_roles() } else { f.values };
        validate::roles(declared, &value)
            .map_err(|message| Problem::validation(vec![FieldError { field: f.name.into(), message }]))?;
        return Ok(Some((f.name.to_owned(), value)));
    }
    if settable(f) {
        return Err(Problem::forbidden(format!("only an admin may set `{}`", f.name)));
    }
    // Not settable: refused or dropped below like any other such field.
    Ok(None)
}
