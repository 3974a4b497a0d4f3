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

use crate::access;
use crate::body;
use crate::caller::Caller;
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
use std::cell::Cell;

/// The write a body is read for.
pub(crate) enum Write<'a> {
    Create,
    /// `current` is the record's representation as it stands, which a GET-modify-PUT
    /// round trip sends back.
    Replace {
        current: &'a Record,
    },
    /// JSON Merge Patch: also sent as `application/merge-patch+json`. `mine`: the record
    /// written is the caller's.
    Patch {
        mine: bool,
    },
}

impl Write<'_> {
    fn settable(&self, f: &FieldSpec) -> bool {
        match self {
            Write::Create => f.create,
            Write::Replace { .. } => f.replace,
            Write::Patch { .. } => f.patch,
        }
    }

    /// Whether the record written is the caller's, as a field's `write: [owner]` asks: a
    /// new record of an owned resource becomes theirs.
    fn mine(&self, spec: &ResourceSpec, caller: &Caller) -> bool {
        match self {
            Write::Create => spec.owner.is_some(),
            Write::Replace { current } => access::owns(spec, caller, current),
            Write::Patch { mine } => *mine,
        }
    }
}

/// The fields of the body that `T`, the operation's input type, accepted, validated,
/// passed through `hook` and validated again (a hook may change them; a hooks trait's
/// default, which says it did not, spares the second pass), with an admin's
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
    // What is generic here is the typing alone; the rest is in functions of their own,
    // compiled once rather than for every input type of every service.
    let bytes = body::json(headers, body, matches!(write, Write::Patch { .. }))?;
    if !by_name(spec, view, caller, &write)
        && let Some(typed) = straight::<T>(&bytes)
    {
        return checked(spec, view, typed, hook).and_then(|input| required(spec, caller, &write, input));
    }
    let (object, roles) = named(spec, view, caller, &write, &bytes)?;
    let input = checked(spec, view, body::typed::<T>(object)?, hook)?;
    finish(spec, caller, &write, input, roles)
}

/// An admin's `roles` in a write: the field's name and the value to store.
type Roles = (String, Value);

/// Whether the body must go through a JSON object before it is typed ([module docs](self)).
fn by_name(spec: &ResourceSpec, view: &View, caller: &Caller, write: &Write<'_>) -> bool {
    let mine = write.mine(spec, caller);
    matches!(write, Write::Replace { .. })
        || spec
            .fields
            .iter()
            .any(|f| f.kind == FieldKind::Roles || !view.has(&f.gate) || barred(f, caller, write, mine))
}

/// A field settable in `write` that this caller may not set (its `write`): theirs as a
/// field the input type lacks would be, refused or dropped as `unknown_fields` says.
fn barred(f: &FieldSpec, caller: &Caller, write: &Write<'_>, mine: bool) -> bool {
    write.settable(f) && !access::writes(f, caller, mine)
}

/// The body as a JSON object of the fields `T` may be given: an admin's `roles` taken out
/// (and given back beside it), a replace's unchanged server-controlled fields ignored, and
/// the fields the request's version lacks or the caller may not set refused or dropped.
fn named(
    spec: &ResourceSpec,
    view: &View,
    caller: &Caller,
    write: &Write<'_>,
    bytes: &[u8],
) -> Result<(Map<String, Value>, Option<Roles>), Problem> {
    let mine = write.mine(spec, caller);
    let mut object = body::object_of(bytes)?;
    let roles = take_roles(spec, caller, &mut object, |f| write.settable(f))?;
    if let Write::Replace { current } = write {
        // A GET-modify-PUT round trip sends the server-controlled fields back: unchanged,
        // they are ignored; changed, they fail below like any field the client may not set.
        object.retain(|k, v| {
            let client_controlled = spec.field(k).is_some_and(|f| f.replace && !barred(f, caller, write, mine));
            client_controlled || current.get(k) != Some(v)
        });
    }
    let outside = |name: &str| outside(spec, view, name);
    let barred = |name: &str| spec.field(name).is_some_and(|f| barred(f, caller, write, mine));
    if spec.reject_unknown {
        let n = view.number().unwrap_or_default();
        let errors: Vec<FieldError> = object
            .keys()
            .filter_map(|k| {
                let message = if outside(k) {
                    format!("is not a field of version {n}")
                } else if barred(k) {
                    body::NOT_SETTABLE.to_owned()
                } else {
                    return None;
                };
                Some(FieldError { field: k.clone(), message })
            })
            .collect();
        if !errors.is_empty() {
            return Err(Problem::validation(errors));
        }
    }
    object.retain(|k, _| !outside(k) && !barred(k));
    Ok((object, roles))
}

/// The typed, checked input of a body read by name: what a hook set that the caller may
/// not set taken out, an admin's `roles` put in.
fn finish(
    spec: &ResourceSpec,
    caller: &Caller,
    write: &Write<'_>,
    mut input: Record,
    roles: Option<Roles>,
) -> Result<Record, Problem> {
    let mine = write.mine(spec, caller);
    input.retain(|k| !spec.field(k).is_some_and(|f| barred(f, caller, write, mine)));
    if let Some((name, value)) = roles {
        input.insert(name, value);
    }
    required(spec, caller, write, input)
}

/// A required field that only some may set is optional in the input type: it is required
/// here, of the callers who may set it, in a create and a replace.
fn required(spec: &ResourceSpec, caller: &Caller, write: &Write<'_>, input: Record) -> Result<Record, Problem> {
    if matches!(write, Write::Patch { .. }) {
        return Ok(input);
    }
    let mine = write.mine(spec, caller);
    let errors: Vec<FieldError> = spec
        .fields
        .iter()
        .filter(|f| f.write.is_some() && f.required && write.settable(f) && access::writes(f, caller, mine))
        .filter(|f| !input.contains_key(f.name))
        .map(|f| FieldError { field: f.name.into(), message: body::REQUIRED.into() })
        .collect();
    if errors.is_empty() { Ok(input) } else { Err(Problem::validation(errors)) }
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
    let mut input = as_record(&typed)?;
    // A hook is given valid input, and what it leaves is checked again, unless it was a
    // hooks trait's default, which leaves the input as it was given.
    let mut valid = false;
    if let Some(hook) = hook {
        check(spec, &input)?;
        valid = left_as_given(&mut typed, hook)?;
        if !valid {
            input = as_record(&typed)?;
        }
    }
    input.retain(|k| !outside(spec, view, k));
    if !valid {
        check(spec, &input)?;
    }
    Ok(input)
}

thread_local! {
    /// Where the input lies that a hooks trait's default method was last given (0: none).
    static UNCHANGED: Cell<usize> = const { Cell::new(0) };
}

/// What a generated hooks trait's default method calls: it leaves `input` as given.
///
/// A generated service passes every method of its hooks trait, overridden or not, and
/// the runtime cannot tell the trait's default from a rule; the default says so here, so
/// a write whose hook is the default is converted and checked once, as one without a
/// hook is. The mark is the input's address, so a rule that calls another method's
/// default (given another value) does not stand for its own input.
pub fn unchanged<T>(input: &T) {
    UNCHANGED.set(address(input));
}

/// Runs `hook` on `typed`: `Ok(true)` where it was a default that left `typed` as given.
fn left_as_given<T>(typed: &mut T, hook: impl FnOnce(&mut T) -> Result<(), Problem>) -> Result<bool, Problem> {
    // Hooks are plain functions, run to their end on this thread: nothing else runs here
    // between the mark's clearing and its reading.
    UNCHANGED.set(0);
    let at = address(typed);
    let ran = hook(typed);
    let untouched = UNCHANGED.replace(0) == at;
    ran.map(|()| untouched)
}

fn address<T>(value: &T) -> usize {
    std::ptr::from_ref(value).addr()
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
) -> Result<Option<Roles>, Problem> {
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

#[cfg(test)]
mod tests {
    use super::*;

    static SPEC: ResourceSpec = ResourceSpec {
        name: "user",
        fields: &[FieldSpec { name: "name", max_length: Some(5), ..FieldSpec::DEFAULT }],
        ..ResourceSpec::DEFAULT
    };

    thread_local! {
        static CONVERTED: Cell<usize> = const { Cell::new(0) };
    }

    /// An input that counts how often it is converted to a record.
    struct Named {
        name: String,
    }

    impl Serialize for Named {
        fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            use serde::ser::SerializeStruct;
            CONVERTED.set(CONVERTED.get() + 1);
            let mut s = serializer.serialize_struct("Named", 1)?;
            s.serialize_field("name", &self.name)?;
            s.end()
        }
    }

    fn named(name: &str) -> Named {
        Named { name: name.to_owned() }
    }

    fn run(input: Named, hook: impl FnOnce(&mut Named) -> Result<(), Problem>) -> (Result<Record, Problem>, usize) {
        CONVERTED.set(0);
        let out = checked(&SPEC, &View::NONE, input, Some(hook));
        (out, CONVERTED.get())
    }

    fn refused_field(out: Result<Record, Problem>) -> String {
        let problem = out.expect_err("refused");
        assert_eq!(problem.status, axum::http::StatusCode::BAD_REQUEST);
        problem.errors.iter().map(|e| e.field.as_str()).collect::<Vec<_>>().join(",")
    }

    #[test]
    fn a_default_hook_leaves_its_input_converted_and_checked_once() {
        let (out, converted) = run(named("ann"), |input| {
            unchanged(input);
            Ok(())
        });
        assert_eq!(out.unwrap().get("name"), Some(&Value::from("ann")));
        assert_eq!(converted, 1);
    }

    /// The mark spares the check after a default, never the one before it.
    #[test]
    fn a_default_hook_is_never_given_invalid_input() {
        let mut ran = false;
        let (out, _) = run(named("annabel"), |input| {
            ran = true;
            unchanged(input);
            Ok(())
        });
        assert_eq!(refused_field(out), "name");
        assert!(!ran, "the hook ran on input that breaks a field's rule");
    }

    #[test]
    fn a_rule_that_changes_its_input_has_it_checked_again() {
        let (out, converted) = run(named("ann"), |input| {
            input.name = "annabel".into();
            Ok(())
        });
        assert_eq!(refused_field(out), "name");
        assert_eq!(converted, 2);
        let (out, _) = run(named("ann"), |input| {
            input.name = "bo".into();
            Ok(())
        });
        assert_eq!(out.unwrap().get("name"), Some(&Value::from("bo")));
    }

    /// A rule that hands another value to a default still has its own input checked.
    #[test]
    fn a_mark_stands_for_the_input_it_was_given_alone() {
        let (out, _) = run(named("ann"), |input| {
            unchanged(&named("other"));
            input.name = "annabel".into();
            Ok(())
        });
        assert_eq!(refused_field(out), "name");
    }

    /// A default that refused leaves no mark for the next write on the thread.
    #[test]
    fn a_refusal_leaves_no_mark_behind() {
        let mut input = named("ann");
        let refused = left_as_given(&mut input, |input| {
            unchanged(input);
            Err(Problem::unprocessable("no"))
        });
        assert!(refused.is_err());
        assert_eq!(UNCHANGED.get(), 0);
    }
}
