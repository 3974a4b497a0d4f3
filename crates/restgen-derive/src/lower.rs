//! Lowering: the attributes and Rust types of one struct into the model both front-ends
//! share, every default applied as the YAML front-end applies it. A resource seen alone
//! knows nothing of the service around it, so the service facts it needs come from a
//! [`Context`]; other resources it names (`owner`, `ref`, `nested_under`) enter the model
//! as stubs that carry only what the struct says of them (their id type), and the
//! compiler checks the rest against their own derives.

use crate::attr::{self, DefaultAttr, FieldAttrs, ResourceAttrs, Sp};
use crate::errors::{Errors, text};
use crate::ty::{self, Rust};
use heck::ToSnakeCase;
use proc_macro2::Span;
use restgen_core::diagnostics::codes;
use restgen_core::diagnostics::did_you_mean;
use restgen_core::model::*;
use restgen_core::origin::{DeriveSpan, Located, Origin};
use restgen_core::words::Word;
use std::time::Duration;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields};

/// The service facts a resource seen alone is lowered with: what a schema's top level
/// would say. A derived service authenticates its callers and pages with the schema
/// format's defaults, unless told otherwise.
#[derive(Clone, Debug)]
pub struct Context {
    /// Whether callers sign in; without, access defaults to `anyone`.
    pub auth: bool,
    /// Paging for resources that declare none.
    pub pagination: Pagination,
    /// The roles callers may hold, where a service declares them in one place (a
    /// derived service declares them at run time, on its `App`).
    pub roles: Vec<String>,
}

impl Default for Context {
    fn default() -> Self {
        Context { auth: true, pagination: Pagination::default(), roles: Vec::new() }
    }
}

pub use restgen_core::emit::derived::Named;

/// A derived resource: the model, the service it was lowered into (holding it, stubs of
/// the resources it names, and the context's facts), and the Rust paths of those others.
pub struct Lowered {
    pub service: Service,
    pub resource: Resource,
    pub others: Vec<Named>,
    /// What the struct's Rust types say beyond the model.
    pub rust: RustTypes,
    /// What the checks warn of, shown where the expansion compiles.
    pub warnings: Vec<crate::check::Warning>,
}

pub use restgen_core::emit::derived::{OwnEnum, RustTypes};

/// What the Rust types of `resource`'s fields say beyond the model: the enum fields whose
/// type is not the one the derive declares (`{Resource}{Field}`), hand-written enums the
/// expansion names instead; and the dates and datetimes held as the `time` crate's types.
pub(crate) fn rust_types(
    fields: &syn::punctuated::Punctuated<syn::Field, syn::Token![,]>,
    resource: &Resource,
) -> RustTypes {
    let struct_field = |name: &str| {
        fields.iter().find(|s| s.ident.as_ref().is_some_and(|i| i.to_string().trim_start_matches("r#") == name))
    };
    let enums = resource
        .fields
        .iter()
        .filter(|f| matches!(f.ty.value, FieldType::Enum { .. }))
        .filter_map(|f| {
            let declared = declared_enum(&resource.name.value, &f.name.value);
            let inner = ty::read(&struct_field(&f.name.value)?.ty).inner;
            (ty::name(inner).as_deref() != Some(declared.as_str()))
                .then(|| OwnEnum { field: f.name.value.clone(), ty: inner.clone() })
        })
        .collect();
    let times = resource
        .fields
        .iter()
        .filter(|f| struct_field(&f.name.value).is_some_and(|s| ty::read(&s.ty).kind.is_time()))
        .map(|f| f.name.value.clone())
        .collect();
    RustTypes { enums, times }
}

/// The enum the derive declares for `resource.field` (`OrderStatus`), as the emitters name it.
fn declared_enum(resource: &str, field: &str) -> String {
    use heck::ToUpperCamelCase;
    format!("{}{}", resource.to_upper_camel_case(), field.to_upper_camel_case())
}

/// A field of the `time` crate's types must be written as the wire writes dates and
/// datetimes, which serde does only when told: by a `#[serde(with = ...)]` of its own.
fn time_on_the_wire(field: &syn::Field, read: &ty::Read, fname: &str, errors: &mut Errors) {
    if !read.kind.is_time() {
        return;
    }
    // `with`, or both halves of it; serde's own parser judges the values.
    let mut keys = Vec::new();
    for a in field.attrs.iter().filter(|a| a.path().is_ident("serde")) {
        let _ = a.parse_nested_meta(|meta| {
            if let Some(key) = meta.path.get_ident() {
                keys.push(key.to_string());
            }
            if meta.input.peek(syn::Token![=]) {
                meta.value()?.parse::<syn::Expr>()?;
            }
            Ok(())
        });
    }
    let has = |k: &str| keys.iter().any(|key| key == k);
    let told = has("with") || (has("serialize_with") && has("deserialize_with"));
    if !told {
        let module = if read.optional { "restgen::time::option" } else { "restgen::time" };
        errors.at(
            codes::RUST_TYPE,
            field.ty.span(),
            format!(
                "`{fname}` holds a `time` type, which serde writes in `time`'s own form, not as RFC 3339 like \
                 the service: add `#[serde(with = \"{module}\")]` (and derive serde's traits on the struct, \
                 the record as hooks and clients read it)"
            ),
        );
    }
}

fn at(span: Span) -> Origin {
    Origin::Span(DeriveSpan::new(span))
}

fn located<T>(sp: Sp<T>) -> Located<T> {
    Located::new(sp.value, at(sp.span))
}

/// The resource name of a type path: `Customer` and `crate::CustomerAccount` name
/// `customer` and `customer_account`.
fn resource_name(path: &syn::Path) -> String {
    path.segments.last().map_or_else(String::new, |s| s.ident.to_string().to_snake_case())
}

/// One of the words of `W`, or an error listing them.
fn choose<W: Word>(word: &Sp<String>, what: &str, errors: &mut Errors) -> Option<W> {
    if let Some(v) = W::from_word(&word.value) {
        return Some(v);
    }
    let names = W::WORDS;
    let hint = match did_you_mean(&word.value, names.iter().copied()) {
        Some(m) => format!("did you mean `{m}`?"),
        None => format!("expected one of: {}", names.join(", ")),
    };
    errors.at(codes::INVALID_VALUE, word.span, format!("unknown {what} `{}`; {hint}", word.value));
    None
}

/// Lowers `input`, a struct with `#[derive(Resource)]`, and runs the checks a resource
/// seen alone allows; every problem found, each at its span.
pub fn lower_resource(input: &DeriveInput, cx: &Context) -> syn::Result<Lowered> {
    let mut errors = Errors::default();
    let mut lowered = lower(input, cx, &mut errors);
    if let Some(l) = &mut lowered {
        l.warnings = crate::check::run(&l.service, &l.resource, &mut errors);
    }
    errors.finish()?;
    lowered.ok_or_else(|| {
        syn::Error::new(input.ident.span(), text(codes::DERIVE_SHAPE, "this struct could not be read as a resource"))
    })
}

fn lower(input: &DeriveInput, cx: &Context, errors: &mut Errors) -> Option<Lowered> {
    if !input.generics.params.is_empty() {
        errors.at(
            codes::DERIVE_SHAPE,
            input.generics.span(),
            "a resource cannot be generic: its table and routes are one per type",
        );
    }
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Some(&named.named),
            _ => None,
        },
        _ => None,
    };
    let Some(fields) = fields else {
        errors.at(
            codes::DERIVE_SHAPE,
            input.ident.span(),
            "`#[derive(Resource)]` needs a struct with named fields: one per field of the resource",
        );
        return None;
    };
    let before = errors.len();
    let attrs = attr::resource(&input.attrs, errors);
    let attrs_misread = errors.len() > before;
    let type_name = input.ident.to_string();
    let name =
        attrs.name.clone().map_or_else(|| Located::new(type_name.to_snake_case(), at(input.ident.span())), located);
    let origin = at(input.ident.span());
    let path = match attrs.path.clone() {
        Some(p) => located(p),
        None if attrs_misread => Located::new(format!("/{}s", name.value), origin.clone()),
        None => {
            errors.at(
                codes::MISSING_KEY,
                input.ident.span(),
                format!("a resource needs a collection path: add `#[resource(path = \"/{}s\")]`", name.value),
            );
            Located::new(format!("/{}s", name.value), origin.clone())
        }
    };

    // The server-set fields the struct must hold, and what they say.
    let mut id = IdKind::Uuid;
    let mut seen_id = false;
    let mut owner_id: Option<(IdKind, Span)> = None;
    let mut created_at = None;
    let mut updated_at = None;
    let mut model_fields = Vec::new();
    let mut refs: Vec<(String, syn::Path, IdKind)> = Vec::new();
    for f in fields {
        let Some(ident) = &f.ident else { continue };
        let fname = ident.to_string().trim_start_matches("r#").to_owned();
        let read = ty::read(&f.ty);
        let server_set = restgen_core::check::RESERVED_FIELDS.contains(&fname.as_str());
        if server_set {
            if let Some(a) = f.attrs.iter().find(|a| a.path().is_ident("field")) {
                errors.at(
                    codes::RESERVED_FIELD,
                    a.span(),
                    format!("`{fname}` is set by the server; it takes no `#[field]`"),
                );
            }
            let id_kind = match read.kind {
                Rust::Uuid => Some(IdKind::Uuid),
                Rust::Integer => Some(IdKind::Integer),
                _ => None,
            };
            match fname.as_str() {
                "id" | "owner_id" => {
                    seen_id |= fname == "id";
                    let Some(kind) = id_kind.filter(|_| !read.optional) else {
                        errors.at(codes::RUST_TYPE, f.ty.span(), format!("`{fname}` is an id: `Uuid` or `i64`"));
                        continue;
                    };
                    if fname == "id" {
                        id = kind;
                    } else {
                        owner_id = Some((kind, f.ty.span()));
                    }
                }
                _ => {
                    if !matches!(read.kind, Rust::DateTime | Rust::TimeDateTime) || read.optional {
                        errors.at(
                            codes::RUST_TYPE,
                            f.ty.span(),
                            format!("`{fname}` is a timestamp: `DateTime<Utc>` or `time::OffsetDateTime`"),
                        );
                    }
                    time_on_the_wire(f, &read, &fname, errors);
                    if fname == "created_at" {
                        created_at = Some(ident.span());
                    } else {
                        updated_at = Some(ident.span());
                    }
                }
            }
            continue;
        }
        let before = errors.len();
        let fa = attr::field(&f.attrs, errors);
        // A field whose attribute is wrong is not judged further on what it lacks: the
        // mistake is reported, not its consequences.
        let misread = errors.len() > before;
        if let Some(target) = &fa.reference {
            let kind = if read.kind == Rust::Integer { IdKind::Integer } else { IdKind::Uuid };
            refs.push((resource_name(target), target.clone(), kind));
        }
        let (optional, ty_span) = (read.optional || misread, f.ty.span());
        time_on_the_wire(f, &read, &fname, errors);
        if let Some(field) = field(&fname, ident.span(), &name.value, &f.ty, read, fa, errors) {
            model_fields.push((field, optional, ty_span));
        }
    }
    if !seen_id {
        errors.at(
            codes::RUST_TYPE,
            input.ident.span(),
            "a resource holds its id: add `pub id: Uuid` (or `i64` for integer ids)",
        );
    }
    let timestamps = match (created_at, updated_at) {
        (Some(_), Some(_)) => true,
        (None, None) => false,
        (Some(span), None) | (None, Some(span)) => {
            errors.at(
                codes::RUST_TYPE,
                span,
                "timestamps come in pairs: hold both `created_at` and `updated_at`, or neither",
            );
            true
        }
    };

    let owner = attrs.owner.as_ref().map(|p| Located::new(resource_name(p), at(p.span())));
    match (&owner, owner_id) {
        (Some(o), None) => errors.at(
            codes::RUST_TYPE,
            attrs.owner.as_ref().map_or(Span::call_site(), Spanned::span),
            format!(
                "records owned by `{}` hold the owner's id: add `pub owner_id: Uuid` (the owner's id type)",
                o.value
            ),
        ),
        (None, Some((_, span))) => errors.at(
            codes::RUST_TYPE,
            span,
            "`owner_id` is set from the caller for owned records: add `#[resource(owner = ...)]` or drop the field",
        ),
        _ => {}
    }

    let states = attrs.states.as_ref().map(|s| states(s, errors));
    // A record starts in the initial state: that is the state field's default.
    if let Some(s) = &states
        && let Some((f, _, _)) =
            model_fields.iter_mut().find(|(f, _, _)| f.name.value == s.field.value && f.default.is_none())
        && f.ty.value.values().iter().any(|v| v.value == s.initial.value)
    {
        f.default = Some(Located::new(DefaultValue::Value(s.initial.value.clone().into()), s.initial.origin.clone()));
    }
    // A value every record holds comes from the client at create (required) or from a
    // default; a field a record may lack is an `Option`. (A lifecycle that names no field
    // leaves its state field without the default it meant to give: that mistake is
    // reported by the checks, not this consequence of it.)
    let lost_state =
        states.as_ref().is_some_and(|s| !model_fields.iter().any(|(f, _, _)| f.name.value == s.field.value));
    for (f, optional, ty_span) in &model_fields {
        let stateful = lost_state && matches!(f.ty.value, FieldType::Enum { .. });
        if !optional && !stateful && !f.required.value && f.default.is_none() && f.ty.value != FieldType::Roles {
            errors.at(
                codes::RUST_TYPE,
                *ty_span,
                format!(
                    "a record may lack `{}`: no client must send it and it has no default; make it `Option<...>`, \
                     give it a `default`, or make it settable at create",
                    f.name.value
                ),
            );
        }
    }
    let model_fields: Vec<Field> = model_fields.into_iter().map(|(f, _, _)| f).collect();

    let operations = match &attrs.operations {
        Some(words) => {
            let mut ops: Vec<Operation> = words.iter().filter_map(|w| choose(w, "operation", errors)).collect();
            ops.sort();
            ops.dedup();
            ops
        }
        None => Operation::ALL.to_vec(),
    };
    let access = access(&attrs, owner.is_some(), cx, &origin);
    let not_owned =
        attrs.not_owned.as_ref().and_then(|w| choose(w, "`not_owned` answer", errors)).unwrap_or(NotOwned::DEFAULT);
    let pagination = match &attrs.pagination {
        Some(p) => pagination(p, &cx.pagination, errors),
        None => cx.pagination.clone(),
    };
    let envelope = match &attrs.envelope {
        Some(e) if e.value == Envelope::BARE => Located::new(Envelope::Bare, at(e.span)),
        Some(e) => Located::new(Envelope::Key(e.value.clone()), at(e.span)),
        None => Located::new(Envelope::Key(Envelope::DEFAULT_KEY.into()), origin.clone()),
    };
    let mut formats = Located::new(vec![Format::Json], origin.clone());
    if let Some(written) = &attrs.formats {
        formats.origin = at(written.span);
        for f in &written.value {
            if let Some(format) = choose::<Format>(f, "format", errors)
                && !formats.value.contains(&format)
            {
                formats.value.push(format);
            }
        }
    }
    let cache = attrs.cache.as_ref().map(|c| cache(c, errors));
    let unknown_fields = attrs
        .unknown_fields
        .as_ref()
        .and_then(|w| choose(w, "`unknown_fields` policy", errors))
        .unwrap_or(UnknownFields::DEFAULT);
    let rate_limit = attrs.rate_limit.as_ref().and_then(|r| rate_limit(r, cx.auth, errors));
    let nested: Vec<(String, syn::Path)> = attrs.nested_under.iter().map(|p| (resource_name(p), p.clone())).collect();
    let resource = Resource {
        renamed_from: attrs.renamed_from.clone().map(located),
        description: attrs.description.clone(),
        path,
        operations,
        fields: model_fields,
        id,
        timestamps,
        owner: owner.clone(),
        nested_under: attrs.nested_under.iter().map(|p| Located::new(resource_name(p), at(p.span()))).collect(),
        access,
        not_owned,
        pagination,
        envelope,
        formats,
        cache,
        unknown_fields,
        former_paths: attrs.former_paths.iter().cloned().map(located).collect(),
        require_if_match: attrs.require_if_match.clone().map_or_else(|| Located::new(false, origin.clone()), located),
        states,
        status_endpoint: attrs.status_endpoint.clone().map_or_else(|| Located::new(false, origin.clone()), located),
        events: attrs.events.iter().cloned().map(located).collect(),
        links: attrs.links.clone().map_or_else(|| Located::new(false, origin.clone()), located),
        rate_limit,
        gate: gate(attrs.since.as_ref(), attrs.until.as_ref(), errors),
        name,
        origin,
    };

    // The other resources named: stubs with what the struct says of them.
    let mut others: Vec<Named> = Vec::new();
    let mut stubs: Vec<Resource> = Vec::new();
    let mut add = |name: String, path: &syn::Path, id: Option<IdKind>| {
        if name == resource.name.value || others.iter().any(|o| o.name == name) {
            return;
        }
        others.push(Named { name: name.clone(), path: path.clone(), id });
        stubs.push(Resource::with_defaults(&name, id.unwrap_or(IdKind::DEFAULT)));
    };
    if let (Some(o), Some(p)) = (&owner, &attrs.owner) {
        add(o.value.clone(), p, owner_id.map(|(k, _)| k));
    }
    for (target, p, kind) in &refs {
        add(target.clone(), p, Some(*kind));
    }
    for (parent, p) in &nested {
        let kind = if owner.as_ref().is_some_and(|o| &o.value == parent) { owner_id.map(|(k, _)| k) } else { None };
        add(parent.clone(), p, kind);
    }
    let identifier = match &attrs.principal {
        Some(p) => principal_fields(p, &resource, errors),
        None => None,
    };
    let principal = if attrs.principal.is_some() {
        Some(resource.name.value.clone())
    } else {
        owner.as_ref().map(|o| o.value.clone())
    };
    let mut service = surrounding_service(cx, principal, &resource, stubs);
    if let Some(auth) = &mut service.auth {
        auth.login.identifier = identifier;
    }
    let rust = rust_types(fields, &resource);
    Some(Lowered { service, resource, others, rust, warnings: Vec::new() })
}

/// Lowers `input`, a struct with `#[derive(Input)]`: a body type whose fields are a
/// create's, and whether each struct field is an `Option`.
pub fn lower_input(input: &DeriveInput) -> syn::Result<(Service, Resource, Vec<bool>, RustTypes)> {
    let mut errors = Errors::default();
    let fields = match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => Some(&named.named),
            _ => None,
        },
        _ => None,
    };
    let Some(fields) = fields else {
        return Err(syn::Error::new(
            input.ident.span(),
            text(codes::DERIVE_SHAPE, "`#[derive(Input)]` needs a struct with named fields"),
        ));
    };
    if !input.generics.params.is_empty() {
        errors.at(codes::DERIVE_SHAPE, input.generics.span(), "a body type cannot be generic");
    }
    let name = input.ident.to_string().to_snake_case();
    let mut model_fields = Vec::new();
    let mut optional = Vec::new();
    for f in fields {
        let Some(ident) = &f.ident else { continue };
        let fname = ident.to_string().trim_start_matches("r#").to_owned();
        let read = ty::read(&f.ty);
        let is_option = read.optional;
        let fa = attr::field(&f.attrs, &mut errors);
        if let Some(r) = &fa.reference {
            errors.at(
                codes::KEY_NOT_FOR_TYPE,
                r.span(),
                "a body type names no other resource: an id field is a plain `Uuid` or `i64`",
            );
            continue;
        }
        if let Some(field) = field(&fname, ident.span(), &name, &f.ty, read, fa, &mut errors) {
            model_fields.push(field);
            optional.push(is_option);
        }
    }
    let mut resource = Resource::with_defaults(&name, IdKind::DEFAULT);
    resource.operations = vec![Operation::Create];
    resource.fields = model_fields;
    resource.origin = at(input.ident.span());
    let service = surrounding_service(&Context { auth: false, ..Context::default() }, None, &resource, Vec::new());
    let mut diags = restgen_core::Diagnostics::new();
    restgen_core::check::check_input(&service, &resource, &mut diags);
    crate::check::report(&diags, &mut errors);
    errors.finish()?;
    let rust = rust_types(fields, &resource);
    Ok((service, resource, optional, rust))
}

/// The principal signs in with an identifier field and a password field: both must be
/// there. Returns the identifier.
fn principal_fields(p: &Sp<Option<Sp<String>>>, resource: &Resource, errors: &mut Errors) -> Option<Located<String>> {
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
fn surrounding_service(cx: &Context, principal: Option<String>, resource: &Resource, stubs: Vec<Resource>) -> Service {
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

/// One struct field as a model field: its type from the Rust type and the attributes,
/// its flags, bounds and defaults.
fn field(
    fname: &str,
    span: Span,
    resource: &str,
    rust_ty: &syn::Type,
    read: ty::Read,
    fa: FieldAttrs,
    errors: &mut Errors,
) -> Option<Field> {
    let origin = at(span);
    let ty_span = rust_ty.span();
    let fty = field_type(fname, resource, &read, &fa, ty_span, errors)?;
    let nullable = fa.nullable.clone().map_or_else(|| Located::new(read.optional, at(ty_span)), located);
    if nullable.value && !read.optional {
        errors.at(
            codes::RUST_TYPE,
            fa.nullable.as_ref().map_or(ty_span, |n| n.span),
            format!("`{fname}` may be null, so its type is `Option<...>`"),
        );
    }
    let settable = match (&fa.settable, fa.not_settable) {
        (Some(words), _) => {
            let mut s = Settable::NEVER;
            for w in &words.value {
                match choose(w, "operation `settable` applies to", errors) {
                    Some(WriteOp::Create) => s.create = true,
                    Some(WriteOp::Replace) => s.replace = true,
                    Some(WriteOp::Patch) => s.patch = true,
                    None => {}
                }
            }
            Located::new(s, at(words.span))
        }
        (None, Some(span)) => Located::new(Settable::NEVER, at(span)),
        (None, None) => Located::new(Settable::NEVER, origin.clone()),
    };
    let default = fa.default.clone().map(|d| {
        let value = match d.value {
            DefaultAttr::Now => DefaultValue::Now,
            DefaultAttr::Value(v) => DefaultValue::Value(v),
        };
        Located::new(value, at(d.span))
    });
    // A value a record must always hold comes from the client at create (required) or
    // from a default; a field the client may leave out is an `Option`.
    let required = match fa.required.clone() {
        Some(r) => located(r),
        None => Located::new(!read.optional && default.is_none() && settable.value.create, origin.clone()),
    };
    let flag = |v: &Option<Sp<bool>>| v.clone().map_or_else(|| Located::new(false, origin.clone()), located);
    let is_password = fty == FieldType::Password;
    Some(Field {
        name: Located::new(fname.to_owned(), origin.clone()),
        renamed_from: fa.renamed_from.clone().map(located),
        description: fa.description.clone(),
        ty: Located::new(fty, fa.kind.as_ref().map_or_else(|| at(ty_span), |k| at(k.span))),
        required,
        nullable,
        default,
        settable,
        write_only: fa.write_only.as_ref().is_some_and(|w| w.value) || is_password,
        read_only: fa.read_only.as_ref().is_some_and(|r| r.value),
        unique: flag(&fa.unique),
        unique_global: fa.unique_global,
        min: fa.min.clone().map(located),
        max: fa.max.clone().map(located),
        min_length: fa.min_length.clone().map(located),
        max_length: fa.max_length.clone().map(located),
        pattern: fa.pattern.clone().map(located),
        filter: flag(&fa.filter),
        sort: flag(&fa.sort),
        gate: gate(fa.since.as_ref(), fa.until.as_ref(), errors),
        origin,
    })
}

/// The schema type of a field: what its Rust type says, refined by `text`, `email`, `url`,
/// `password`, `json`, `roles`, `values(...)` or `ref = ...`.
fn field_type(
    fname: &str,
    resource: &str,
    read: &ty::Read,
    fa: &FieldAttrs,
    ty_span: Span,
    errors: &mut Errors,
) -> Option<FieldType> {
    let kind = fa.kind.as_ref().map(|k| k.value.as_str());
    if let Some(values) = &fa.values {
        let expected = declared_enum(resource, fname);
        // `{Resource}{Field}` is declared by the derive; any other named type is an enum of
        // the user's, whose expansion asserts that its variants are these values.
        if ty::name(read.inner).as_deref() != Some(expected.as_str()) && read.kind != Rust::Other {
            errors.at(
                codes::RUST_TYPE,
                ty_span,
                format!(
                    "a field with `values` holds an enum: `{fname}: {expected}`, which the derive declares, \
                     or an enum of yours with `#[derive(restgen::Enum)]`"
                ),
            );
        }
        return Some(FieldType::Enum { values: values.value.iter().cloned().map(located).collect() });
    }
    if let Some(target) = &fa.reference {
        if !matches!(read.kind, Rust::Uuid | Rust::Integer) {
            errors.at(codes::RUST_TYPE, ty_span, format!("`{fname}` refers to a record by its id: `Uuid` or `i64`"));
        }
        return Some(FieldType::Ref { to: Located::new(resource_name(target), at(target.span())) });
    }
    let mismatch = |errors: &mut Errors, wants: &str| {
        errors.at(
            codes::RUST_TYPE,
            ty_span,
            format!("`{fname}` is declared `{}`, which holds {wants}", kind.unwrap_or("?")),
        );
    };
    Some(match (kind, read.kind) {
        (None, Rust::String) => FieldType::String,
        (Some("text"), Rust::String) => FieldType::Text,
        (Some("email"), Rust::String) => FieldType::Email,
        (Some("url"), Rust::String) => FieldType::Url,
        (Some("password"), Rust::String) => FieldType::Password,
        (Some("text" | "email" | "url" | "password"), _) => {
            mismatch(errors, "text: `String`");
            FieldType::String
        }
        (Some("json"), _) => FieldType::Json,
        (Some("roles"), Rust::Strings) => FieldType::Roles,
        (Some("roles"), _) => {
            mismatch(errors, "role names: `Vec<String>`");
            FieldType::Roles
        }
        (_, Rust::Integer) => FieldType::Integer,
        (_, Rust::Float) => FieldType::Number,
        (_, Rust::Bool) => FieldType::Boolean,
        (_, Rust::Uuid) => FieldType::Uuid,
        (_, Rust::Date | Rust::TimeDate) => FieldType::Date,
        (_, Rust::DateTime | Rust::TimeDateTime) => FieldType::DateTime,
        (_, Rust::Decimal) => FieldType::Decimal,
        (_, Rust::Json) => FieldType::Json,
        _ => {
            errors.at(codes::RUST_TYPE,
                ty_span,
                format!(
                    "restgen cannot tell the type of `{fname}` from its Rust type: use String, i64, f64, bool, Uuid, \
                     NaiveDate, DateTime<Utc>, time's Date or OffsetDateTime, Decimal, serde_json::Value, an enum with `#[field(values(...))]` \
                     (declared by the derive, or yours with `#[derive(restgen::Enum)]`), \
                     or an id with `#[field(ref = Type)]`"
                ),
            );
            return None;
        }
    })
}

/// `access`, each key defaulting as the format says (the context's auth deciding between
/// `anyone` and `authenticated`); `all` sets every key the others do not.
fn access(attrs: &ResourceAttrs, owned: bool, cx: &Context, origin: &Origin) -> Access {
    let at_access = attrs.access_span.map_or_else(|| origin.clone(), at);
    let default_rule = if !cx.auth {
        AccessRule::Anyone
    } else if owned {
        AccessRule::Owner
    } else {
        AccessRule::Authenticated
    };
    let default = vec![Located::new(default_rule, at_access.clone())];
    let mut access = Access {
        create: default.clone(),
        read: default.clone(),
        write: default.clone(),
        delete: default,
        origin: at_access,
    };
    let rules_of = |words: &[Sp<String>]| -> Vec<Located<AccessRule>> {
        words.iter().map(|w| Located::new(AccessRule::from_word(&w.value), at(w.span))).collect()
    };
    // `all` first, so the keys written beside it win.
    for (_, words) in attrs.access.iter().filter(|(k, _)| k.value == "all") {
        let rules = rules_of(words);
        access.create = rules.clone();
        access.read = rules.clone();
        access.write = rules.clone();
        access.delete = rules;
    }
    for (key, words) in attrs.access.iter().filter(|(k, _)| k.value != "all") {
        let rules = rules_of(words);
        match key.value.as_str() {
            "create" => access.create = rules,
            "read" => access.read = rules,
            "write" => access.write = rules,
            _ => access.delete = rules,
        }
    }
    access
}

fn pagination(p: &attr::PaginationAttrs, base: &Pagination, errors: &mut Errors) -> Pagination {
    let mut out = Pagination { origin: at(p.span), ..base.clone() };
    if let Some(style) = &p.style
        && let Some(s) = choose::<PageStyle>(style, "pagination style", errors)
    {
        out.style = s;
    }
    let size = |s: &Sp<u64>, errors: &mut Errors| match u32::try_from(s.value) {
        Ok(n) => Some(Located::new(n, at(s.span))),
        Err(_) => {
            errors.at(codes::INVALID_VALUE, s.span, "a page size must fit in 32 bits");
            None
        }
    };
    if let Some(n) = p.default_size.as_ref().and_then(|s| size(s, errors)) {
        out.default_size = n;
    }
    if let Some(n) = p.max_size.as_ref().and_then(|s| size(s, errors)) {
        out.max_size = n;
    }
    out
}

fn cache(c: &attr::CacheAttrs, errors: &mut Errors) -> Cache {
    let max_age = match &c.max_age {
        Some(text) => duration(text, "`max_age`", errors).unwrap_or(Duration::ZERO),
        None => {
            errors.at(codes::MISSING_KEY, c.span, "`cache` needs `max_age`: how long caches may keep a read");
            Duration::ZERO
        }
    };
    let visibility = match &c.visibility {
        Some(w) => Located::new(choose(w, "cache visibility", errors).unwrap_or(Visibility::DEFAULT), at(w.span)),
        None => Located::new(Visibility::DEFAULT, at(c.span)),
    };
    Cache { max_age, visibility, origin: at(c.span) }
}

fn duration(text: &Sp<String>, what: &str, errors: &mut Errors) -> Option<Duration> {
    let d = parse_duration(&text.value);
    if d.is_none() {
        errors.at(
            codes::INVALID_VALUE,
            text.span,
            format!("{what} `{}` is not a duration; {DURATION_HINT}", text.value),
        );
    }
    d
}

fn states(s: &attr::StatesAttrs, errors: &mut Errors) -> States {
    let required = |v: &Option<Sp<String>>, key: &str, errors: &mut Errors| match v {
        Some(v) => located(v.clone()),
        None => {
            errors.at(codes::MISSING_KEY, s.span, format!("`states` needs `{key}`"));
            Located::new(String::new(), at(s.span))
        }
    };
    let field = required(&s.field, "field", errors);
    let initial = required(&s.initial, "initial", errors);
    if s.transitions.is_empty() {
        errors.at(codes::MISSING_KEY, s.span, "`states` needs `transitions(...)`: how records move between states");
    }
    let transitions = s
        .transitions
        .iter()
        .map(|t| Transition {
            name: located(t.name.clone()),
            from: t.from.iter().cloned().map(located).collect(),
            to: match &t.to {
                Some(to) => located(to.clone()),
                None => {
                    errors.at(
                        codes::MISSING_KEY,
                        t.name.span,
                        format!("transition `{}` needs `to = <state>`", t.name.value),
                    );
                    Located::new(String::new(), at(t.name.span))
                }
            },
            roles: t.roles.iter().cloned().map(located).collect(),
            origin: at(t.name.span),
        })
        .collect();
    States { field, initial, transitions, origin: at(s.span) }
}

fn rate_limit(r: &attr::RateAttrs, auth: bool, errors: &mut Errors) -> Option<RateLimit> {
    let algo =
        r.algorithm.as_ref().map_or(Some(RateAlgorithmKind::DEFAULT), |a| choose(a, "rate limit algorithm", errors))?;
    let wrong = |present: bool, span: Span, key: &str, errors: &mut Errors| {
        if present {
            errors.at(codes::KEY_NOT_FOR_TYPE, span, format!("`{key}` does not apply to this algorithm"));
        }
    };
    let algorithm = if matches!(algo, RateAlgorithmKind::TokenBucket | RateAlgorithmKind::LeakyBucket) {
        let token = algo == RateAlgorithmKind::TokenBucket;
        wrong(r.limit.is_some(), r.span, "limit", errors);
        wrong(r.window.is_some(), r.span, "window", errors);
        wrong(!token && r.refill_per_second.is_some(), r.span, "refill_per_second", errors);
        wrong(token && r.leak_per_second.is_some(), r.span, "leak_per_second", errors);
        let capacity = r.capacity.as_ref().map(|c| c.value);
        let rate = if token { &r.refill_per_second } else { &r.leak_per_second }.as_ref().map(|f| f.value);
        if capacity.is_none() || rate.is_none() {
            let needs = if token {
                "a token bucket needs `capacity` and `refill_per_second`"
            } else {
                "a leaky bucket needs `capacity` and `leak_per_second`"
            };
            errors.at(codes::MISSING_KEY, r.span, needs);
        }
        // The values are judged by the checks, as a schema's are.
        let capacity = capacity.map_or(Some(1), |c| u32::try_from(c).ok()).unwrap_or(u32::MAX);
        if token {
            RateAlgorithm::TokenBucket { capacity, refill_per_second: rate.unwrap_or(1.0) }
        } else {
            RateAlgorithm::LeakyBucket { capacity, leak_per_second: rate.unwrap_or(1.0) }
        }
    } else {
        wrong(r.capacity.is_some(), r.span, "capacity", errors);
        wrong(r.refill_per_second.is_some(), r.span, "refill_per_second", errors);
        wrong(r.leak_per_second.is_some(), r.span, "leak_per_second", errors);
        if r.limit.is_none() || r.window.is_none() {
            errors.at(codes::MISSING_KEY, r.span, "a window needs `limit` and `window`");
        }
        let limit = r.limit.as_ref().map_or(Some(1), |l| u32::try_from(l.value).ok()).unwrap_or(u32::MAX);
        let window = r.window.as_ref().and_then(|w| duration(w, "`window`", errors)).unwrap_or(Duration::from_secs(1));
        if algo == RateAlgorithmKind::FixedWindow {
            RateAlgorithm::FixedWindow { limit, window }
        } else {
            RateAlgorithm::SlidingWindow { limit, window }
        }
    };
    let default_key = RateKey::default_for(auth);
    let key = match &r.key {
        Some(k) => Located::new(choose(k, "rate limit key", errors).unwrap_or(default_key), at(k.span)),
        None => Located::new(default_key, at(r.span)),
    };
    Some(RateLimit { algorithm, key, origin: at(r.span) })
}

fn gate(since: Option<&Sp<u64>>, until: Option<&Sp<u64>>, errors: &mut Errors) -> Gate {
    let version = |v: &Sp<u64>, errors: &mut Errors| match u32::try_from(v.value) {
        Ok(n) => Some(Located::new(n, at(v.span))),
        Err(_) => {
            errors.at(codes::INVALID_VALUE, v.span, "a version is a whole number that fits in 32 bits");
            None
        }
    };
    Gate { since: since.and_then(|v| version(v, errors)), until: until.and_then(|v| version(v, errors)) }
}
