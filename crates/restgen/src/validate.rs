//! Rules serde cannot express: bounds, lengths, patterns, formats, and `null` where a
//! field is not nullable. Types, enum values and unknown fields are serde's part.

use crate::problem::FieldError;
use crate::spec::{FieldKind, FieldSpec};
use crate::store::Record;
use restgen_model::{bounds, predicates};
use serde_json::{Map, Value};

/// What a body's fields are looked up in by name: a JSON object, or a record.
pub trait Fields {
    fn field(&self, name: &str) -> Option<&Value>;
}

impl Fields for Map<String, Value> {
    fn field(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

impl Fields for Record {
    fn field(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// Every problem of the fields present in `body`, one per field.
pub fn fields(specs: &[FieldSpec], body: &impl Fields) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for f in specs {
        if let Some(v) = body.field(f.name)
            && let Err(message) = value(f, v)
        {
            errors.push(FieldError { field: f.name.to_owned(), message });
        }
    }
    errors
}

/// The rules of `f` on one value; list filters use it too, so a filter value that no
/// record could hold is refused as the OpenAPI document says.
pub(crate) fn value(f: &FieldSpec, v: &Value) -> Result<(), String> {
    if v.is_null() {
        return if f.nullable { Ok(()) } else { Err("may not be null".into()) };
    }
    // The longest form of each non-text string, as the OpenAPI document states.
    let longest = match f.kind {
        FieldKind::Ref if matches!(f.to, Some((_, crate::spec::IdKind::Uuid))) => Some(bounds::UUID_CHARS),
        kind => bounds::longest_form(kind),
    };
    if let (Some(max), Some(s)) = (longest, v.as_str())
        && s.chars().count() > max
    {
        return Err(format!("is longer than {max} characters"));
    }
    match f.kind {
        FieldKind::Integer | FieldKind::Number => number(f, v.as_f64().unwrap_or_default()),
        FieldKind::Decimal => {
            let text = v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string());
            let n: f64 = text.parse().map_err(|_| "is not a decimal number".to_owned())?;
            number(f, n)
        }
        FieldKind::String | FieldKind::Text | FieldKind::Email | FieldKind::Url | FieldKind::Password => {
            text(f, v.as_str().unwrap_or_default())
        }
        FieldKind::Roles => roles(f.values, v),
        _ => Ok(()),
    }
}

/// A list of declared roles, each once.
pub(crate) fn roles(declared: &[&str], v: &Value) -> Result<(), String> {
    let Some(items) = v.as_array() else { return Err("must be a list of roles".into()) };
    let mut seen = Vec::new();
    for item in items {
        match item.as_str() {
            Some(r) if declared.contains(&r) && !seen.contains(&r) => seen.push(r),
            Some(r) if seen.contains(&r) => return Err(format!("names `{r}` twice")),
            Some(r) => return Err(format!("`{r}` is not a role; expected one of: {}", declared.join(", "))),
            None => return Err("must be a list of roles".into()),
        }
    }
    Ok(())
}

fn number(f: &FieldSpec, n: f64) -> Result<(), String> {
    if let Some(min) = f.min
        && n < min
    {
        return Err(format!("must be at least {min}"));
    }
    if let Some(max) = f.max
        && n > max
    {
        return Err(format!("must be at most {max}"));
    }
    Ok(())
}

fn text(f: &FieldSpec, s: &str) -> Result<(), String> {
    // PostgreSQL cannot store NUL in text; refused everywhere so both databases agree.
    if s.contains('\0') {
        return Err("may not contain NUL characters".into());
    }
    let len = s.chars().count() as u64;
    if let Some(min) = f.min_length
        && len < min
    {
        return Err(format!("must be at least {min} characters long"));
    }
    if let Some(max) = f.max_length
        && len > max
    {
        return Err(format!("must be at most {max} characters long"));
    }
    if let Some(p) = f.pattern
        && !patterns::matches(p, s)
    {
        return Err(format!("must match the pattern `{p}`"));
    }
    match f.kind {
        FieldKind::Email if !predicates::is_email(s) => Err("is not an e-mail address".into()),
        FieldKind::Url if !predicates::is_url(s) => Err("is not an http or https URL".into()),
        _ => Ok(()),
    }
}

/// `pattern`s, with the `patterns` feature: each matches the whole value, and is compiled
/// once per process.
#[cfg(feature = "patterns")]
mod patterns {
    use regex::Regex;
    use std::collections::HashMap;
    use std::sync::{OnceLock, RwLock};

    pub(super) fn matches(p: &'static str, s: &str) -> bool {
        compiled(p).is_match(s)
    }

    fn compiled(p: &'static str) -> Regex {
        static CACHE: OnceLock<RwLock<HashMap<&'static str, Regex>>> = OnceLock::new();
        let cache = CACHE.get_or_init(Default::default);
        if let Some(re) = cache.read().expect("never poisoned: no panics while held").get(p) {
            return re.clone();
        }
        // The schema checker compiled this pattern already; a failure here is a bug.
        let re = Regex::new(&format!("^(?:{p})$")).expect("patterns are checked by restgen");
        cache.write().expect("never poisoned").insert(p, re.clone());
        re
    }
}

/// `pattern`s in a build without the `patterns` feature. Generated code and derive
/// expansions with a `pattern` require the feature (`require!`), and a service whose
/// resources have one is refused at start ([`crate::serve`]); only a body type assembled by
/// hand gets here, and its value is refused rather than let through unchecked.
#[cfg(not(feature = "patterns"))]
mod patterns {
    pub(super) fn matches(p: &'static str, _: &str) -> bool {
        tracing::error!(
            "a field's `pattern` ({p}) cannot be checked: this build of restgen leaves out its `patterns` feature"
        );
        false
    }
}
