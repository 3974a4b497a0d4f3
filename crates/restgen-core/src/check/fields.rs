//! Each field on its own: type-specific keys, bounds, defaults, and who may set it.

use crate::diagnostics::{Diagnostics, codes, did_you_mean};
use crate::model::{DefaultValue, Field, FieldType, Resource, Service};
use crate::predicates;
use restgen_model::query;
use serde_json::Value;

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    for r in &service.resources {
        resource(service, r, diags);
    }
}

pub(super) fn resource(service: &Service, resource: &Resource, diags: &mut Diagnostics) {
    for field in &resource.fields {
        enum_values(field, diags);
        keys_fit_type(field, diags);
        bounds_ordered(field, diags);
        pattern_compiles(field, diags);
        default_fits(service, field, diags);
        filter_and_sort_supported(field, diags);
        filter_not_a_list_parameter(resource, field, diags);
        settable_only_when_client_controlled(resource, field, diags);
        required_is_settable(resource, field, diags);
        flags_agree(field, diags);
        unique_within_owner(resource, field, diags);
    }
}

/// A warning: a value unique across every owner's records tells one account what another
/// holds (its create is refused 409 "exists already"), and lets an account claim values
/// first to block another. Unique per owner (`unique: true`) keeps accounts apart.
///   customer: { owner: user, fields: { email: { type: email, unique: global } } }   # warned
fn unique_within_owner(resource: &Resource, field: &Field, diags: &mut Diagnostics) {
    if !(field.unique_global && resource.owner.is_some()) {
        return;
    }
    diags
        .warning(
            codes::DISCLOSING_UNIQUE,
            &field.unique.origin,
            format!(
                "`unique: global` on `{}.{}` discloses values across accounts: one account's create is refused when another's record holds the value",
                resource.name.value, field.name.value
            ),
        )
        .hint("use `unique: true` (unique per owner) unless the value must be one across every account's records");
}

/// An `enum` needs at least one value, each written once.
///   status: { type: enum }                 # rejected: no values
///   status: { type: enum, values: [a, a] } # rejected: `a` twice
fn enum_values(field: &Field, diags: &mut Diagnostics) {
    let FieldType::Enum { values } = &field.ty.value else { return };
    if values.is_empty() {
        diags
            .error(
                codes::ENUM_WITHOUT_VALUES,
                &field.ty.origin,
                format!("enum field `{}` has no values", field.name.value),
            )
            .hint("list them: `values: [pending, paid]`");
    }
    for (i, v) in values.iter().enumerate() {
        if let Some(first) = values[..i].iter().find(|w| w.value == v.value) {
            diags
                .error(codes::DUPLICATE_ENTRY, &v.origin, format!("enum value `{}` is listed twice", v.value))
                .related(&first.origin, "first listed here");
        }
        if v.value.is_empty() {
            diags.error(codes::INVALID_VALUE, &v.origin, "an enum value cannot be empty");
        }
    }
}

/// `min`/`max` belong to numbers, `min_length`/`max_length`/`pattern` to text; `unique`
/// needs a value that can be compared.
fn keys_fit_type(field: &Field, diags: &mut Diagnostics) {
    let ty = &field.ty.value;
    if !ty.is_numeric() {
        for bound in [("min", &field.min), ("max", &field.max)] {
            if let (key, Some(b)) = bound {
                diags
                    .error(codes::KEY_NOT_FOR_TYPE, &b.origin, format!("`{key}` does not apply to {} field", a(ty.keyword())))
                    .hint("`min` and `max` bound integer, number and decimal fields; text takes `min_length` and `max_length`");
            }
        }
    } else if *ty == FieldType::Integer {
        for b in [&field.min, &field.max].into_iter().flatten() {
            if b.value.fract() != 0.0 {
                diags.error(
                    codes::INVALID_VALUE,
                    &b.origin,
                    format!("bound {} of an integer field is not a whole number", b.value),
                );
            }
        }
    }
    if !ty.is_textual() {
        for (key, origin) in [
            ("min_length", field.min_length.as_ref().map(|b| &b.origin)),
            ("max_length", field.max_length.as_ref().map(|b| &b.origin)),
            ("pattern", field.pattern.as_ref().map(|b| &b.origin)),
        ] {
            if let Some(origin) = origin {
                diags.error(
                    codes::KEY_NOT_FOR_TYPE,
                    origin,
                    format!("`{key}` does not apply to {} field", a(ty.keyword())),
                );
            }
        }
    }
    if field.unique.value && matches!(ty, FieldType::Json | FieldType::Password | FieldType::Roles) {
        diags.error(
            codes::KEY_NOT_FOR_TYPE,
            &field.unique.origin,
            format!("{} field cannot be `unique`", a(ty.keyword())),
        );
    }
}

/// A lower bound above its upper bound admits no value at all.
///   age: { type: integer, min: 10, max: 5 }   # rejected
fn bounds_ordered(field: &Field, diags: &mut Diagnostics) {
    if let (Some(min), Some(max)) = (&field.min, &field.max)
        && min.value > max.value
    {
        diags
            .error(codes::MIN_ABOVE_MAX, &min.origin, format!("`min` {} is above `max` {}", min.value, max.value))
            .related(&max.origin, "`max` set here");
    }
    if let (Some(min), Some(max)) = (&field.min_length, &field.max_length)
        && min.value > max.value
    {
        diags
            .error(
                codes::MIN_ABOVE_MAX,
                &min.origin,
                format!("`min_length` {} is above `max_length` {}", min.value, max.value),
            )
            .related(&max.origin, "`max_length` set here");
    }
}

/// `pattern` is a regular expression in the syntax of the `regex` crate, matched against
/// the whole value.
fn pattern_compiles(field: &Field, diags: &mut Diagnostics) {
    if let Some(p) = &field.pattern
        && let Err(e) = regex::Regex::new(&p.value)
    {
        let detail = e.to_string();
        let last = detail.lines().last().unwrap_or("invalid").trim().to_owned();
        diags.error(codes::BAD_PATTERN, &p.origin, format!("`pattern` is not a valid regular expression: {last}"));
    }
}

/// A default is a legal value of the field: its type, its bounds, its enum values.
///   qty: { type: integer, min: 1, default: 0 }   # rejected
fn default_fits(service: &Service, field: &Field, diags: &mut Diagnostics) {
    let Some(default) = &field.default else { return };
    if let Err(why) = default_problem(service, field, &default.value) {
        diags
            .error(codes::BAD_DEFAULT, &default.origin, format!("default of `{}` {why}", field.name.value))
            .label(format!("field type is {}", field.ty.value.keyword()));
    }
}

fn default_problem(service: &Service, field: &Field, default: &DefaultValue) -> Result<(), String> {
    let ty = &field.ty.value;
    let value = match default {
        DefaultValue::Now if matches!(ty, FieldType::Date | FieldType::DateTime) => return Ok(()),
        DefaultValue::Now => return Err("`now` applies only to date and datetime fields".into()),
        DefaultValue::Value(v) => v,
    };
    if value.is_null() {
        return if field.nullable.value { Ok(()) } else { Err("is null but the field is not nullable".into()) };
    }
    let text = value.as_str();
    match ty {
        FieldType::Password => Err("is not allowed: a password has no default".into()),
        FieldType::Ref { .. } => Err("is not allowed: a ref has no default".into()),
        FieldType::Json => Ok(()),
        FieldType::Boolean => value.as_bool().map(drop).ok_or_else(|| "is not a boolean".into()),
        FieldType::Integer => {
            let n = value.as_i64().ok_or("is not an integer")?;
            within_bounds(field, n as f64)
        }
        FieldType::Number => {
            let n = value.as_f64().ok_or("is not a number")?;
            within_bounds(field, n)
        }
        FieldType::Decimal => {
            let n = match value {
                Value::Number(n) => n.as_f64(),
                Value::String(s) if predicates::is_decimal(s) => s.parse::<f64>().ok(),
                _ => None,
            };
            within_bounds(field, n.ok_or("is not a decimal number")?)
        }
        FieldType::Enum { values } => {
            let s = text.ok_or("is not one of the enum values")?;
            if values.iter().any(|v| v.value == s) {
                Ok(())
            } else {
                let hint = did_you_mean(s, values.iter().map(|v| v.value.as_str()))
                    .map(|m| format!("; did you mean `{m}`?"))
                    .unwrap_or_default();
                Err(format!("`{s}` is not one of the enum values{hint}"))
            }
        }
        FieldType::Roles => {
            let roles = value.as_array().ok_or("is not a list of roles")?;
            for r in roles {
                let r = r.as_str().ok_or("holds something that is not a role name")?;
                if !service.auth.as_ref().is_some_and(|a| a.has_role(r)) {
                    return Err(format!("names undeclared role `{r}`"));
                }
            }
            Ok(())
        }
        FieldType::Uuid => match text {
            Some(s) if predicates::is_uuid(s) => Ok(()),
            _ => Err("is not a UUID".into()),
        },
        FieldType::Date => match text {
            Some(s) if predicates::is_date(s) => Ok(()),
            _ => Err("is not a date (YYYY-MM-DD) or `now`".into()),
        },
        FieldType::DateTime => match text {
            Some(s) if predicates::is_datetime(s) => Ok(()),
            _ => Err("is not an RFC 3339 datetime or `now`".into()),
        },
        FieldType::String | FieldType::Text | FieldType::Email | FieldType::Url => {
            let s = text.ok_or("is not a string")?;
            text_fits(field, s)
        }
    }
}

fn within_bounds(field: &Field, n: f64) -> Result<(), String> {
    if let Some(min) = &field.min
        && n < min.value
    {
        return Err(format!("{n} is below `min` {}", min.value));
    }
    if let Some(max) = &field.max
        && n > max.value
    {
        return Err(format!("{n} is above `max` {}", max.value));
    }
    Ok(())
}

fn text_fits(field: &Field, s: &str) -> Result<(), String> {
    let len = s.chars().count() as u64;
    if let Some(min) = &field.min_length
        && len < min.value
    {
        return Err(format!("is shorter than `min_length` {}", min.value));
    }
    if let Some(max) = field.effective_max_length()
        && len > max
    {
        return Err(format!("is longer than its `max_length` {max}"));
    }
    if let Some(p) = &field.pattern
        && let Ok(re) = regex::Regex::new(&format!("^(?:{})$", p.value))
        && !re.is_match(s)
    {
        return Err("does not match `pattern`".into());
    }
    match field.ty.value {
        FieldType::Email if !predicates::is_email(s) => Err("is not an e-mail address".into()),
        FieldType::Url if !predicates::is_url(s) => Err("is not an http or https URL".into()),
        _ => Ok(()),
    }
}

/// A filter is the query parameter named for its field; a field named as its list's `sort`
/// or one of its paging parameters would be read as those, never as a filter.
///   page: { type: integer, filter: true }   # rejected where the list is paged by page
fn filter_not_a_list_parameter(resource: &Resource, field: &Field, diags: &mut Diagnostics) {
    let name = field.name.value.as_str();
    if !field.filter.value {
        return;
    }
    let (what, hint) = if name == query::SORT {
        ("the list's sort parameter", "rename the field, or leave `filter` out")
    } else if resource.pagination.style.parameters().contains(&name) {
        ("one of the list's paging parameters", "rename the field, leave `filter` out, or page the list another way")
    } else {
        return;
    };
    diags
        .error(
            codes::FILTER_UNSUPPORTED,
            &field.filter.origin,
            format!("field `{name}` cannot be a list filter: `{name}` is {what}"),
        )
        .hint(hint);
}

/// `filter` and `sort` need a type with a meaningful equality or order, and a value the
/// caller may see: filtering on a hidden field would leak it one guess at a time.
fn filter_and_sort_supported(field: &Field, diags: &mut Diagnostics) {
    let ty = &field.ty.value;
    if field.filter.value && !ty.filterable() {
        diags
            .error(
                codes::FILTER_UNSUPPORTED,
                &field.filter.origin,
                format!("{} field cannot be a list filter", a(ty.keyword())),
            )
            .hint("filters work on enum, string, email, url, uuid, integer, boolean, ref, date and datetime fields");
    } else if field.filter.value && field.write_only {
        diags.error(codes::FILTER_UNSUPPORTED, &field.filter.origin, "a write-only field cannot be a list filter");
    }
    if field.sort.value && !ty.sortable() {
        diags
            .error(codes::SORT_UNSUPPORTED, &field.sort.origin, format!("a list cannot be sorted by {} field", a(ty.keyword())))
            .hint("sorting works on string, email, url, uuid, integer, number, decimal, date, datetime, enum and boolean fields");
    } else if field.sort.value && field.write_only {
        diags.error(codes::SORT_UNSUPPORTED, &field.sort.origin, "a list cannot be sorted by a write-only field");
    }
}

/// Only client-controlled fields may be `settable`: a `read_only` field and the state
/// field (moved only by transitions) are server-controlled.
fn settable_only_when_client_controlled(resource: &Resource, field: &Field, diags: &mut Diagnostics) {
    if !field.settable.value.any() {
        return;
    }
    if field.read_only {
        diags
            .error(
                codes::SETTABLE_SERVER_FIELD,
                &field.settable.origin,
                format!("`{}` is read_only and cannot be settable", field.name.value),
            )
            .hint("drop `settable`, or drop `read_only`");
    }
    if resource.state_field() == Some(field.name.value.as_str()) {
        diags
            .error(
                codes::SETTABLE_SERVER_FIELD,
                &field.settable.origin,
                format!("`{}` is the state field and cannot be settable", field.name.value),
            )
            .hint("it changes only through the transitions under `states`");
    }
}

/// A required field must be given at create, so the client must be allowed to give it.
///   total: { type: integer, required: true }   # rejected: not settable at create
fn required_is_settable(resource: &Resource, field: &Field, diags: &mut Diagnostics) {
    if field.required.value
        && !field.read_only
        && resource.state_field() != Some(field.name.value.as_str())
        && !field.settable.value.create
    {
        diags
            .error(
                codes::REQUIRED_NOT_SETTABLE,
                &field.required.origin,
                format!("`{}` is required but not settable at create", field.name.value),
            )
            .hint("add `settable: true` (or a list that holds `create`), or give it a `default` instead of `required`");
    }
}

/// `read_only` and `write_only` together hide a field from everybody; a write-only field
/// nobody may set is dead.
fn flags_agree(field: &Field, diags: &mut Diagnostics) {
    if field.read_only && field.write_only && field.ty.value != FieldType::Password {
        diags.error(
            codes::CONFLICTING_FLAGS,
            &field.origin,
            format!("`{}` is both read_only and write_only: nobody could ever set or see it", field.name.value),
        );
    } else if field.write_only && !field.settable.value.any() {
        diags
            .warning(
                codes::CONFLICTING_FLAGS,
                &field.origin,
                format!("`{}` is write_only but not settable: nobody can set or see it", field.name.value),
            )
            .hint("add `settable: true`");
    }
}

/// `a string`, `an email`: the word with its article.
fn a(word: &str) -> String {
    let article = if word.starts_with(['a', 'e', 'i', 'o', 'u']) { "an" } else { "a" };
    format!("{article} {word}")
}
