//! The first admin, seeded from the environment (`<SERVICE>_ADMIN`): no account is built
//! in, and no admin exists until the operator says who it is.

use crate::problem::FieldError;
use crate::spec::{AuthSpec, FieldKind};
use crate::store::{SqlValue, Store};
use crate::validate;
use serde_json::{Map, Value};

/// Makes sure the account described by `json` (the principal's create fields, as a JSON
/// object) exists and holds the first admin role: creates it when its identifier names
/// no account; adds the role to an existing one only when the password in `json` is that
/// account's. Says what it did.
///
/// Never promotes an account it cannot prove is the operator's: anybody may register the
/// identifier the operator is about to name (before the first start, or after a restore),
/// and a promotion on the identifier alone would hand them the admin role. A password that
/// does not match is an error, and the service refuses to start.
pub async fn bootstrap_admin(store: &Store, spec: &'static AuthSpec, json: &str) -> Result<String, String> {
    let principal = spec.principal.as_ref().ok_or("the service has no principal resource")?;
    let role = *spec.admin_roles.first().ok_or("the service declares no `admin_roles`")?;
    let roles_field = principal.roles.ok_or("the principal has no `roles` field to hold the admin role")?;
    let resource = principal.resource;
    let object: Map<String, Value> = match serde_json::from_str(json) {
        Ok(Value::Object(o)) => o,
        _ => return Err("must be a JSON object of the account's fields".into()),
    };
    let identifier = object
        .get(principal.identifier)
        .and_then(Value::as_str)
        .ok_or_else(|| format!("needs `{}`", principal.identifier))?
        .to_owned();
    let field = resource.field(principal.identifier).ok_or("the identifier field is missing")?;
    let stored = super::principal_identifier(field, &identifier);
    let existing = store
        .find_by(resource, principal.identifier, SqlValue::from_owned_json(field, Value::from(stored)))
        .await
        .map_err(|e| e.to_string())?;
    let admin_roles = Value::from(vec![role]);
    if let Some(record) = existing {
        let password = object.get(principal.password).and_then(Value::as_str).unwrap_or_default();
        let hash = record.get(principal.password).and_then(Value::as_str).unwrap_or_default();
        let (password, hash) = (password.to_owned(), hash.to_owned());
        let matches = crate::outlined::spawn_blocking(move || crate::password::verify(&password, &hash))
            .await
            .map_err(|e| e.to_string())?;
        if !matches {
            return Err(format!(
                "an account {identifier} exists already, and the password given is not its password: it is not \
                 made an admin (whoever registered it could then sign in as one). Give that account's password, \
                 or name another identifier"
            ));
        }
        let mut roles: Vec<Value> = record.get(roles_field).and_then(Value::as_array).cloned().unwrap_or_default();
        if roles.iter().any(|r| r == role) {
            return Ok(format!("admin account {identifier} already exists"));
        }
        roles.push(Value::from(role));
        let id = SqlValue::id(resource.id, &record.id_text()).ok_or("the account's id is unreadable")?;
        let f = resource.field(roles_field).ok_or("the roles field is missing")?;
        store
            .update(resource, &id, vec![(f.name, SqlValue::from_owned_json(f, Value::Array(roles)))], Some("updated"))
            .await
            .map_err(|e| e.to_string())?;
        return Ok(format!("account {identifier} now holds the {role} role"));
    }
    // The same rules as a registration: only fields settable at create, all validated.
    let mut errors: Vec<FieldError> = Vec::new();
    for key in object.keys() {
        if !resource.field(key).is_some_and(|f| f.create && f.kind != FieldKind::Roles) {
            errors.push(FieldError { field: key.clone(), message: "is not a field an account is created with".into() });
        }
    }
    for f in resource.fields.iter().filter(|f| f.required && f.create && !object.contains_key(f.name)) {
        errors.push(FieldError { field: f.name.into(), message: "is required".into() });
    }
    errors.extend(validate::fields(resource.fields, &object));
    if !errors.is_empty() {
        let list: Vec<String> = errors.iter().map(|e| format!("`{}` {}", e.field, e.message)).collect();
        return Err(list.join("; "));
    }
    let mut input = object;
    input.insert(roles_field.to_owned(), admin_roles);
    crate::operations::insert(resource, store, input.into(), None, None).await.map_err(|p| p.detail)?;
    Ok(format!("created admin account {identifier}"))
}
