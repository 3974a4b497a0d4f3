//! The service a resource seen alone is lowered into: stubs of the resources it names
//! (its owner, its refs' targets, its parents), carrying only what the struct says of them,
//! the principal's login fields, and the context's facts.

use super::fields::StructFields;
use super::{Context, Named, located, resource_name};
use crate::attr::{ResourceAttrs, Sp};
use crate::errors::Errors;
use restgen_core::diagnostics::{codes, did_you_mean};
use restgen_core::model::*;
use restgen_core::origin::{Located, Origin};

/// The other resources `resource` names, each once, with the Rust path the struct names it
/// by, and a stub of each for the model.
pub(super) fn others(resource: &Resource, attrs: &ResourceAttrs, read: &StructFields) -> (Vec<Named>, Vec<Resource>) {
    let mut others: Vec<Named> = Vec::new();
    let mut stubs: Vec<Resource> = Vec::new();
    let mut add = |name: String, path: &syn::Path, id: Option<IdKind>| {
        if name == resource.name.value || others.iter().any(|o| o.name == name) {
            return;
        }
        others.push(Named { name: name.clone(), path: path.clone(), id });
        stubs.push(Resource::with_defaults(&name, id.unwrap_or(IdKind::DEFAULT)));
    };
    let owner_id = read.owner_id.map(|(k, _)| k);
    if let (Some(o), Some(p)) = (&resource.owner, &attrs.owner) {
        add(o.value.clone(), p, owner_id);
    }
    for (target, p, kind) in &read.refs {
        add(target.clone(), p, Some(*kind));
    }
    for p in &attrs.nested_under {
        let parent = resource_name(p);
        let kind = if resource.owner.as_ref().is_some_and(|o| o.value == parent) { owner_id } else { None };
        add(parent, p, kind);
    }
    (others, stubs)
}

/// The principal signs in with an identifier field and a password field: both must be
/// there. Returns the identifier.
pub(super) fn principal_fields(
    p: &Sp<Option<Sp<String>>>,
    resource: &Resource,
    errors: &mut Errors,
) -> Option<Located<String>> {
    if !resource.fields.iter().any(|f| f.ty.value == FieldType::Password) {
        errors.at(
            codes::PRINCIPAL_INCOMPLETE,
            p.span,
            "accounts sign in with a password: add a field `#[field(password, settable(create))] password: String`",
        );
    }
    let Some(identifier) = &p.value else {
        errors.at(
            codes::PRINCIPAL_INCOMPLETE,
            p.span,
            "name the field accounts sign in with: `principal(identifier = email)`",
        );
        return None;
    };
    match resource.field(&identifier.value) {
        Some(f) if matches!(f.ty.value, FieldType::String | FieldType::Email) && f.unique.value => {}
        Some(_) => errors.at(
            codes::PRINCIPAL_INCOMPLETE,
            identifier.span,
            format!("`{}` identifies an account: a unique string or email field", identifier.value),
        ),
        None => {
            let hint = did_you_mean(&identifier.value, resource.fields.iter().map(|f| f.name.value.as_str()))
                .map_or_else(String::new, |m| format!("; did you mean `{m}`?"));
            errors.at(
                codes::UNKNOWN_FIELD,
                identifier.span,
                format!("`principal` names unknown field `{}`{hint}", identifier.value),
            );
        }
    }
    Some(located(identifier.clone()))
}

/// The service a derived resource is emitted in: the resource, the stubs of those it
/// names, and the context's facts. Only the emitters and the per-resource checks see it.
pub(super) fn surrounding_service(
    cx: &Context,
    principal: Option<String>,
    resource: &Resource,
    stubs: Vec<Resource>,
) -> Service {
    let auth = cx.auth.then(|| Auth {
        schemes: vec![Located::bare(Scheme::DEFAULT)],
        principal: principal.map(Located::bare),
        login: Login { path: Located::bare(Login::PATH.into()), identifier: None, origin: Origin::Unknown },
        jwt: Jwt {
            algorithm: Located::bare(JwtAlgorithm::DEFAULT),
            secret_env: Located::bare(String::new()),
            private_key_env: None,
            public_key_env: None,
            ttl: Located::bare(Jwt::TTL),
            issuer: None,
            audience: None,
            origin: Origin::Unknown,
        },
        api_key: ApiKey { header: Located::bare(ApiKey::HEADER.into()), query: None, origin: Origin::Unknown },
        roles: cx.roles.iter().cloned().map(Located::bare).collect(),
        default_role: None,
        admin_roles: Vec::new(),
        origin: Origin::Unknown,
    });
    let mut resources = vec![resource.clone()];
    resources.extend(stubs);
    Service {
        name: Located::bare("derived".into()),
        title: None,
        description: None,
        api: Api {
            base_path: Located::bare(String::new()),
            versions: Vec::new(),
            versioning: Vec::new(),
            vendor: "derived".into(),
            // The page is the `App`'s to serve (`App::docs`), never a resource's to require.
            docs: false,
            origin: Origin::Unknown,
        },
        auth,
        rate_limit: None,
        pagination: cx.pagination.clone(),
        webhooks: Webhooks::with_defaults(String::new()),
        cors: None,
        trusted_proxies: Vec::new(),
        proxy_header: ProxyHeader::DEFAULT,
        limits: Limits::default(),
        resources,
        origin: Origin::Unknown,
    }
}
