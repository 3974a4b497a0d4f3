//! The `auth` section against the resources: principal, roles, scheme settings, access.

use crate::diagnostics::{Diagnostics, codes, did_you_mean};
use crate::model::{AccessRule, Auth, FieldType, JwtAlgorithm, RateKey, Scheme, Service};
use crate::origin::Located;

pub(super) fn check(service: &Service, diags: &mut Diagnostics) {
    for r in &service.resources {
        resource(r, diags);
    }
    owners_need_principal(service, diags);
    let Some(auth) = &service.auth else {
        access_needs_auth(service, diags);
        return;
    };
    principal_complete(service, auth, diags);
    roles_declared(service, auth, diags);
    scheme_settings(service, auth, diags);
    token_settings(auth, diags);
}

/// What one resource's access lists need: each rule once per list.
pub(super) fn resource(resource: &crate::model::Resource, diags: &mut Diagnostics) {
    for (key, rules) in resource.rule_lists() {
        for (i, rule) in rules.iter().enumerate() {
            if let Some(first) = rules[..i].iter().find(|r| r.value == rule.value) {
                diags
                    .error(
                        codes::DUPLICATE_ENTRY,
                        &rule.origin,
                        format!("`{}` is listed twice in `{key}`", rule.value.word()),
                    )
                    .related(&first.origin, "first listed here");
            }
        }
    }
}

/// Tokens live at least a second; secrets, key files and the API key header are named as
/// the environment and HTTP allow; HS256 signs with a secret, not with key files.
fn token_settings(auth: &Auth, diags: &mut Diagnostics) {
    let jwt = &auth.jwt;
    if jwt.ttl.value.as_secs() == 0 {
        diags.error(codes::INVALID_VALUE, &jwt.ttl.origin, "`ttl` must be at least one second");
    }
    super::settings::env_name(&jwt.secret_env, "`secret_env`", diags);
    for (key, env) in [("`private_key_env`", &jwt.private_key_env), ("`public_key_env`", &jwt.public_key_env)] {
        if let Some(env) = env {
            super::settings::env_name(env, key, diags);
            if jwt.algorithm.value == JwtAlgorithm::Hs256 {
                diags.error(
                    codes::AUTH_CONFIG,
                    &env.origin,
                    "key files are for RS256 and ES256; HS256 uses `secret_env`",
                );
            }
        }
    }
    let header = &auth.api_key.header;
    if !crate::predicates::is_header_name(&header.value) {
        diags.error(codes::INVALID_VALUE, &header.origin, format!("`{}` is not an HTTP header name", header.value));
    }
}

/// `owner` makes object-level authorization apply, which needs callers with identities:
/// `auth.principal` must say which resource holds them.
fn owners_need_principal(service: &Service, diags: &mut Diagnostics) {
    let has_principal = service.auth.as_ref().is_some_and(|a| a.principal.is_some());
    if has_principal {
        return;
    }
    for resource in &service.resources {
        if let Some(owner) = &resource.owner {
            diags
                .error(
                    codes::OWNER_WITHOUT_PRINCIPAL,
                    &owner.origin,
                    format!("`{}` has an owner but no principal is declared", resource.name.value),
                )
                .hint(format!("declare who signs in: `auth: {{ principal: {} }}`", owner.value));
        }
    }
}

/// Without `auth` every caller is anonymous, so access can only be `anyone`.
fn access_needs_auth(service: &Service, diags: &mut Diagnostics) {
    for resource in &service.resources {
        for (key, list) in resource.rule_lists() {
            for rule in list.iter().filter(|r| r.value != AccessRule::Anyone) {
                diags
                    .error(
                        codes::ACCESS_WITHOUT_AUTH,
                        &rule.origin,
                        format!(
                            "`{key}` of `{}` needs callers to sign in, but there is no `auth` section",
                            resource.name.value
                        ),
                    )
                    .hint("add an `auth` section, or use `anyone`");
            }
        }
        if let Some(states) = &resource.states {
            for t in &states.transitions {
                if let Some(role) = t.roles.first() {
                    diags.error(codes::ACCESS_WITHOUT_AUTH, &role.origin, "transition roles need an `auth` section");
                }
            }
        }
    }
}

/// The principal needs an identifier field (for login and Basic) and a `password` field.
fn principal_complete(service: &Service, auth: &Auth, diags: &mut Diagnostics) {
    let Some(name) = &auth.principal else {
        if auth.has_scheme(Scheme::Basic) || auth.has_scheme(Scheme::Bearer) {
            let scheme = auth.schemes.iter().find(|s| matches!(s.value, Scheme::Basic | Scheme::Bearer));
            let origin = scheme.map(|s| &s.origin).unwrap_or(&auth.origin);
            diags
                .error(
                    codes::PRINCIPAL_INCOMPLETE,
                    origin,
                    "bearer and basic sign in against accounts, but `auth.principal` is missing",
                )
                .hint("name the resource that holds accounts: `principal: user`");
        }
        return;
    };
    let Some(principal) = service.resource(&name.value) else {
        let hint = did_you_mean(&name.value, service.resources.iter().map(|r| r.name.value.as_str()))
            .map(|m| format!("did you mean `{m}`?"));
        diags
            .error(
                codes::UNKNOWN_RESOURCE,
                &name.origin,
                format!("`principal` names unknown resource `{}`", name.value),
            )
            .hint_opt(hint);
        return;
    };
    match &auth.login.identifier {
        None => {
            diags
                .error(
                    codes::PRINCIPAL_INCOMPLETE,
                    &name.origin,
                    format!("principal `{}` has no identifier", name.value),
                )
                .label("accounts sign in with an identifier and a password")
                .hint("say which field signs in: `login: { identifier: email }`");
        }
        Some(id) => match principal.field(&id.value) {
            None => {
                let hint = did_you_mean(&id.value, principal.fields.iter().map(|f| f.name.value.as_str()))
                    .map(|m| format!("did you mean `{m}`?"));
                diags
                    .error(
                        codes::UNKNOWN_FIELD,
                        &id.origin,
                        format!("`identifier` names unknown field `{}` of `{}`", id.value, name.value),
                    )
                    .hint_opt(hint);
            }
            Some(field) => {
                if !field.unique.value {
                    diags
                        .error(
                            codes::PRINCIPAL_INCOMPLETE,
                            &id.origin,
                            format!("identifier `{}` is not unique", id.value),
                        )
                        .related(&field.origin, "declared here")
                        .hint("add `unique: true`: two accounts must never share an identifier");
                }
                if !field.required.value {
                    diags
                        .error(
                            codes::PRINCIPAL_INCOMPLETE,
                            &id.origin,
                            format!("identifier `{}` is not required", id.value),
                        )
                        .related(&field.origin, "declared here")
                        .hint("add `required: true`: every account needs one to sign in");
                }
            }
        },
    }
    if !principal.fields.iter().any(|f| f.ty.value == FieldType::Password) {
        diags
            .error(
                codes::PRINCIPAL_INCOMPLETE,
                &name.origin,
                format!("principal `{}` has no password field", name.value),
            )
            .related(&principal.name.origin, "resource declared here")
            .hint("add `password: { type: password, required: true, settable: [create] }`");
    }
}

/// Every role named anywhere (`default_role`, `admin_roles`, `access`, transitions) is
/// one of `auth.roles`, and each role is declared once.
fn roles_declared(service: &Service, auth: &Auth, diags: &mut Diagnostics) {
    for (i, role) in auth.roles.iter().enumerate() {
        if crate::model::AccessRule::WORDS.contains(&role.value.as_str()) {
            diags.error(
                codes::INVALID_VALUE,
                &role.origin,
                format!("`{}` is a reserved access word, not a role name", role.value),
            );
        }
        if let Some(first) = auth.roles[..i].iter().find(|r| r.value == role.value) {
            diags
                .error(codes::DUPLICATE_ENTRY, &role.origin, format!("role `{}` is declared twice", role.value))
                .related(&first.origin, "first declared here");
        }
    }
    let mut named: Vec<(&Located<String>, &str)> = Vec::new();
    if let Some(r) = &auth.default_role {
        named.push((r, "`default_role`"));
    }
    named.extend(auth.admin_roles.iter().map(|r| (r, "`admin_roles`")));
    for resource in &service.resources {
        if let Some(states) = &resource.states {
            for t in &states.transitions {
                named.extend(t.roles.iter().map(|r| (r, "transition `roles`")));
            }
        }
    }
    for (role, key) in named {
        undeclared_role(auth, key, &role.value, &role.origin, diags);
    }
    for resource in &service.resources {
        for (key, list) in resource.rule_lists() {
            for rule in list {
                if let AccessRule::Role(role) = &rule.value {
                    undeclared_role(auth, &format!("`{key}`"), role, &rule.origin, diags);
                }
                // On the principal resource, `owner` is the account itself.
                let is_principal = auth.principal.as_ref().is_some_and(|p| p.value == resource.name.value);
                if rule.value == AccessRule::Owner && resource.owner.is_none() && !is_principal {
                    diags
                        .error(
                            codes::ACCESS_WITHOUT_AUTH,
                            &rule.origin,
                            format!("`owner` in `{key}` but `{}` has no owner", resource.name.value),
                        )
                        .hint("add `owner: <principal>` to the resource; `owner` needs someone to own the record");
                }
            }
        }
    }
}

fn undeclared_role(auth: &Auth, key: &str, role: &str, origin: &crate::Origin, diags: &mut Diagnostics) {
    if auth.has_role(role) {
        return;
    }
    let candidates = auth.roles.iter().map(|r| r.value.as_str()).chain(crate::model::AccessRule::WORDS.iter().copied());
    let hint = match did_you_mean(role, candidates) {
        Some(m) => format!("did you mean `{m}`?"),
        None => "declare it in `auth.roles`, or use one of: anyone, authenticated, owner".to_owned(),
    };
    diags.error(codes::UNDECLARED_ROLE, origin, format!("{key} names undeclared role `{role}`")).hint(hint);
}

/// Settings that cannot work as written: RS256/ES256 without key files, a rate limit keyed
/// by API key without the api_key scheme.
/// Schemes that work but that OWASP's API rules advise against: warned about, since the
/// generated OpenAPI document will carry them and linters will flag it.
fn weak_credentials(auth: &Auth, diags: &mut Diagnostics) {
    if let Some(basic) = auth.schemes.iter().find(|s| s.value == Scheme::Basic) {
        diags
            .warning(
                codes::WEAK_CREDENTIALS,
                &basic.origin,
                "`basic` sends the password with every request, and every request then runs Argon2",
            )
            .hint("prefer `bearer` (log in once) or `api_key`; keep `basic` only for clients that cannot do either");
    }
    if auth.has_scheme(Scheme::ApiKey)
        && let Some(query) = &auth.api_key.query
    {
        diags
            .warning(
                codes::WEAK_CREDENTIALS,
                &query.origin,
                format!(
                    "`api_key.query: {}` puts keys in URLs, where logs, proxies and browser history keep them",
                    query.value
                ),
            )
            .hint("send keys in the header only; keep `query` only for clients that cannot set headers");
    }
}

fn scheme_settings(service: &Service, auth: &Auth, diags: &mut Diagnostics) {
    for (i, s) in auth.schemes.iter().enumerate() {
        if auth.schemes[..i].iter().any(|t| t.value == s.value) {
            diags.error(codes::DUPLICATE_ENTRY, &s.origin, "scheme listed twice");
        }
    }
    weak_credentials(auth, diags);
    let jwt = &auth.jwt;
    if jwt.algorithm.value != JwtAlgorithm::Hs256 {
        for (key, value) in [("private_key_env", &jwt.private_key_env), ("public_key_env", &jwt.public_key_env)] {
            if value.is_none() {
                diags
                    .error(codes::AUTH_CONFIG, &jwt.algorithm.origin, format!("RS256 and ES256 need `jwt.{key}`"))
                    .hint("name the environment variable that holds the path of the PEM file");
            }
        }
    }
    let limits = std::iter::once(&service.rate_limit).chain(service.resources.iter().map(|r| &r.rate_limit));
    for limit in limits.flatten() {
        if limit.key.value == RateKey::ApiKey && !auth.has_scheme(Scheme::ApiKey) {
            diags
                .error(
                    codes::AUTH_CONFIG,
                    &limit.key.origin,
                    "rate limit keyed by `api_key` but the `api_key` scheme is not enabled",
                )
                .hint("add `api_key` to `auth.schemes`, or key by `principal` or `ip`");
        }
    }
}
