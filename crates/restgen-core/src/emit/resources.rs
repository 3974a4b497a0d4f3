//! `resources.rs`: each resource as a `restgen::spec::ResourceSpec`, the plain data the
//! runtime's shared operations are driven by.

use super::rust::RustFile;
use crate::model::*;
use heck::ToShoutySnakeCase;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

pub(crate) fn emit(service: &Service) -> RustFile<'_> {
    let head = quote! {
        //! Every resource as the runtime sees it: fields, access, paging, parents.

        use ::restgen::spec::*;
    };
    let mut tail: Vec<TokenStream> = Vec::new();
    let all = service.resources.iter().map(static_ident);
    tail.push(quote! {
        /// Every resource, in schema order.
        pub static RESOURCES: &[&ResourceSpec] = &[#(&#all),*];
    });
    tail.push(auth(service));
    let limit = rate_limit(service.rate_limit.as_ref(), "default");
    tail.push(quote! {
        /// The service's `rate_limit`: routes of no resource, and resources without
        /// their own.
        pub const RATE_LIMIT: ::core::option::Option<RateSpec> = #limit;
    });
    let versioning = versioning(service);
    tail.push(quote! {
        /// The API versions served side by side, and how a request names one.
        pub static VERSIONING: ::core::option::Option<&VersioningSpec> = #versioning;
    });
    let webhooks = if service.resources.iter().any(|r| !r.events.is_empty()) {
        let w = &service.webhooks;
        let (env, attempts) = (&w.secret_env.value, w.max_attempts);
        let millis = Literal::u64_unsuffixed(u64::try_from(w.timeout.as_millis()).unwrap_or(u64::MAX));
        quote!(::core::option::Option::Some(WebhooksSpec {
            secret_env: #env,
            max_attempts: #attempts,
            timeout: ::core::time::Duration::from_millis(#millis),
        }))
    } else {
        quote!(::core::option::Option::None)
    };
    tail.push(quote! {
        /// How events reach webhook subscribers: where resources publish `events`.
        pub const WEBHOOKS: ::core::option::Option<WebhooksSpec> = #webhooks;
    });
    RustFile::new(head, service.resources.iter().map(|r| spec(service, r)).chain(tail))
}

/// A resource's or field's `since`/`until` as the runtime's `Gate`; `None` when it has
/// neither (every version has it).
fn gate(g: &crate::model::Gate) -> Option<TokenStream> {
    if g.since.is_none() && g.until.is_none() {
        return None;
    }
    let bound = |b: &Option<crate::Located<u32>>| match b {
        Some(b) => {
            let n = Literal::u32_unsuffixed(b.value);
            quote!(::core::option::Option::Some(#n))
        }
        None => quote!(::core::option::Option::None),
    };
    let (since, until) = (bound(&g.since), bound(&g.until));
    Some(quote!(Gate { since: #since, until: #until }))
}

/// `api.versions` and `api.versioning` as the runtime's `VersioningSpec`.
fn versioning(service: &Service) -> TokenStream {
    let api = &service.api;
    if api.versions.is_empty() {
        return quote!(::core::option::Option::None);
    }
    let unix = |v: &Option<crate::Located<i64>>| match v {
        Some(v) => {
            let n = Literal::i64_unsuffixed(v.value);
            quote!(::core::option::Option::Some(#n))
        }
        None => quote!(::core::option::Option::None),
    };
    let versions = api.versions.iter().map(|v| {
        let number = Literal::u32_unsuffixed(v.number.value);
        let (deprecated, sunset) = (unix(&v.deprecated), unix(&v.sunset));
        let media = api.media_type(v.number.value);
        quote!(VersionSpec { number: #number, deprecated: #deprecated, sunset: #sunset, media_type: #media })
    });
    let by = |scheme: Versioning| api.versioning.iter().any(|v| v.value == scheme);
    let (path, header, media_type) = (by(Versioning::Path), by(Versioning::Header), by(Versioning::MediaType));
    let vendor = &api.vendor;
    quote!(::core::option::Option::Some(&VersioningSpec {
        versions: &[#(#versions),*],
        path: #path,
        header: #header,
        media_type: #media_type,
        vendor: #vendor,
    }))
}

/// A limit as the runtime's `RateSpec`, named `name` in the `RateLimit` headers.
fn rate_limit(limit: Option<&RateLimit>, name: &str) -> TokenStream {
    let Some(limit) = limit else { return quote!(::core::option::Option::None) };
    let algorithm = match &limit.algorithm {
        RateAlgorithm::TokenBucket { capacity, refill_per_second } => {
            let (capacity, refill) = (Literal::u32_unsuffixed(*capacity), Literal::f64_unsuffixed(*refill_per_second));
            quote!(RateAlgorithm::TokenBucket { capacity: #capacity, refill_per_second: #refill })
        }
        RateAlgorithm::LeakyBucket { capacity, leak_per_second } => {
            let (capacity, leak) = (Literal::u32_unsuffixed(*capacity), Literal::f64_unsuffixed(*leak_per_second));
            quote!(RateAlgorithm::LeakyBucket { capacity: #capacity, leak_per_second: #leak })
        }
        RateAlgorithm::FixedWindow { limit: most, window } | RateAlgorithm::SlidingWindow { limit: most, window } => {
            let kind = variant("RateAlgorithm", limit_kind(&limit.algorithm));
            let (most, ms) = (Literal::u32_unsuffixed(*most), Literal::u64_unsuffixed(window.as_millis() as u64));
            quote!(#kind { limit: #most, window: ::core::time::Duration::from_millis(#ms) })
        }
    };
    let key = variant("RateKey", limit.key.value.variant());
    quote!(::core::option::Option::Some(RateSpec { name: #name, algorithm: #algorithm, key: #key }))
}

/// The variant of a rate algorithm, by name.
fn limit_kind(algorithm: &RateAlgorithm) -> &'static str {
    match algorithm {
        RateAlgorithm::TokenBucket { .. } => "TokenBucket",
        RateAlgorithm::LeakyBucket { .. } => "LeakyBucket",
        RateAlgorithm::FixedWindow { .. } => "FixedWindow",
        RateAlgorithm::SlidingWindow { .. } => "SlidingWindow",
    }
}

/// `Enum::Variant`, for the model's enums the runtime shares (`restgen::spec` re-exports
/// them): one spelling, whatever the variant.
fn variant(ty: &str, variant: &str) -> TokenStream {
    let (ty, variant) = (format_ident!("{ty}"), format_ident!("{variant}"));
    quote!(#ty::#variant)
}

/// `AUTH`: the `auth` section, `None` for an open service.
fn auth(service: &Service) -> TokenStream {
    let Some(a) = &service.auth else {
        return quote! {
            /// The service is open: no `auth` section.
            pub static AUTH: ::core::option::Option<AuthSpec> = ::core::option::Option::None;
        };
    };
    let schemes = a.schemes.iter().map(|s| variant("Scheme", s.value.variant()));
    let principal = match a.principal.as_ref().and_then(|p| service.resource(&p.value)) {
        Some(p) => {
            let spec = static_ident(p);
            let login_path = format!("{}{}", service.api.base_path.value, a.login.path.value);
            let identifier = a.login.identifier.as_ref().map_or("", |i| i.value.as_str());
            let password = p.fields.iter().find(|f| f.ty.value == FieldType::Password).map_or("", |f| &f.name.value);
            let roles = option_str(p.fields.iter().find(|f| f.ty.value == FieldType::Roles).map(|f| &f.name.value));
            quote!(::core::option::Option::Some(PrincipalSpec {
                resource: &#spec,
                login_path: #login_path,
                identifier: #identifier,
                password: #password,
                roles: #roles,
            }))
        }
        None => quote!(::core::option::Option::None),
    };
    let algorithm = variant("JwtAlgorithm", a.jwt.algorithm.value.variant());
    let asymmetric = a.jwt.algorithm.value != JwtAlgorithm::Hs256;
    let key_env = |declared: &Option<crate::Located<String>>, suffix: &str| {
        let name = declared.as_ref().map(|d| d.value.clone());
        option_str((asymmetric).then(|| name.unwrap_or_else(|| service_env_name(&service.name.value, suffix))).as_ref())
    };
    let secret_env = &a.jwt.secret_env.value;
    let private_key_env = key_env(&a.jwt.private_key_env, "JWT_PRIVATE_KEY");
    let public_key_env = key_env(&a.jwt.public_key_env, "JWT_PUBLIC_KEY");
    let ttl = a.jwt.ttl.value.as_secs();
    let issuer = option_str(a.jwt.issuer.as_ref());
    let audience = option_str(a.jwt.audience.as_ref());
    let header = &a.api_key.header.value;
    let query = option_str(a.api_key.query.as_ref().map(|q| &q.value));
    let roles = a.roles.iter().map(|r| &r.value);
    let default_role = option_str(a.default_role.as_ref().map(|r| &r.value));
    let admin_roles = a.admin_roles.iter().map(|r| &r.value);
    let env_prefix = service_env_name(&service.name.value, "");
    let env_prefix = env_prefix.trim_end_matches('_');
    let realm = &service.name.value;
    quote! {
        /// How callers sign in, and the roles they may hold.
        pub static AUTH: ::core::option::Option<AuthSpec> = ::core::option::Option::Some(AuthSpec {
            schemes: &[#(#schemes),*],
            principal: #principal,
            jwt: JwtSpec {
                algorithm: #algorithm,
                secret_env: #secret_env,
                private_key_env: #private_key_env,
                public_key_env: #public_key_env,
                ttl_seconds: #ttl,
                issuer: #issuer,
                audience: #audience,
            },
            api_key: ApiKeySpec { header: #header, query: #query },
            roles: &[#(#roles),*],
            default_role: #default_role,
            admin_roles: &[#(#admin_roles),*],
            env_prefix: #env_prefix,
            realm: #realm,
        });
    }
}

fn option_str(value: Option<&String>) -> TokenStream {
    match value {
        Some(v) => quote!(::core::option::Option::Some(#v)),
        None => quote!(::core::option::Option::None),
    }
}

/// `ORDER` for `order`.
pub(crate) fn static_ident(resource: &Resource) -> proc_macro2::Ident {
    format_ident!("{}", resource.name.value.to_shouty_snake_case())
}

/// How emitted code reaches another resource's spec and path: in a generated crate its
/// static (`&USER`) and its path as written; beside a derived struct, its derive's
/// constants.
pub(crate) type Refer<'a> = dyn Fn(&Resource) -> (TokenStream, TokenStream) + 'a;

/// Another resource of the same generated `resources.rs`.
fn sibling(r: &Resource) -> (TokenStream, TokenStream) {
    let (ident, path) = (static_ident(r), &r.path.value);
    (quote!(&#ident), quote!(#path))
}

/// `pub static <NAME>: ResourceSpec`, the resource as the runtime sees it.
pub(crate) fn spec(service: &Service, r: &Resource) -> TokenStream {
    spec_with(service, r, &sibling)
}

/// [`spec`], reaching the other resources it names through `refer`.
pub(crate) fn spec_with(service: &Service, r: &Resource, refer: &Refer) -> TokenStream {
    let ident = static_ident(r);
    let name = &r.name.value;
    let path = &r.path.value;
    let doc = format!(" The `{name}` resource.");
    let id = id_kind(r.id);
    let owner = match r.owner.as_ref().and_then(|o| service.resource(&o.value)) {
        Some(p) => {
            let (pname, pid) = (&p.name.value, id_kind(p.id));
            quote!(::core::option::Option::Some((#pname, #pid)))
        }
        None => quote!(::core::option::Option::None),
    };
    let principal = service.auth.as_ref().and_then(|a| a.principal.as_ref()).is_some_and(|p| p.value == r.name.value);
    let timestamps = r.timestamps;
    let fields = r.fields.iter().map(|f| field(service, r, f, Some(refer)));
    let style = variant("PageStyle", r.pagination.style.variant());
    let (default_size, max_size) = (r.pagination.default_size.value, r.pagination.max_size.value);
    let max_cursor = restgen_model::bounds::cursor_max(service, r);
    let envelope = match &r.envelope.value {
        Envelope::Bare => quote!(Envelope::Bare),
        Envelope::Key(k) => quote!(Envelope::Key(#k)),
    };
    let reject = r.unknown_fields == UnknownFields::Reject;
    let operations = r.operations.iter().map(|op| variant("Operation", op.variant()));
    let lifecycle = r.states.as_ref().map(|s| {
        let (field, initial) = (&s.field.value, &s.initial.value);
        let transitions = s.transitions.iter().map(|t| {
            let (name, to) = (&t.name.value, &t.to.value);
            let from = t.from.iter().map(|f| &f.value);
            let roles = t.roles.iter().map(|r| &r.value);
            quote!(TransitionSpec { name: #name, from: &[#(#from),*], to: #to, roles: &[#(#roles),*] })
        });
        let status_endpoint = r.status_endpoint.value;
        quote! {
            ::core::option::Option::Some(LifecycleSpec {
                field: #field,
                initial: #initial,
                transitions: &[#(#transitions),*],
                status_endpoint: #status_endpoint,
            })
        }
    });
    let (create, read, write, delete) =
        (rules(&r.access.create), rules(&r.access.read), rules(&r.access.write), rules(&r.access.delete));
    let hide = r.not_owned == NotOwned::NotFound;
    let parents = r.nested_under.iter().filter_map(|p| service.resource(&p.value)).map(|parent| {
        let column = if r.owner.as_ref().is_some_and(|o| o.value == parent.name.value) {
            "owner_id".to_owned()
        } else {
            r.fields
                .iter()
                .find(|f| matches!(&f.ty.value, FieldType::Ref { to } if to.value == parent.name.value))
                .map_or_else(String::new, |f| f.name.value.clone())
        };
        let pname = &parent.name.value;
        let (pspec, ppath) = refer(parent);
        quote!(ParentSpec { spec: #pspec, resource: #pname, path: #ppath, column: #column })
    });
    let cache_control = r.cache_control();
    let limit = rate_limit(r.rate_limit.as_ref(), &r.rate_limit_name());
    let parents: Vec<TokenStream> = parents.collect();
    // What differs from `ResourceSpec::DEFAULT` (the format's defaults), and only that.
    let mut differs: Vec<TokenStream> = Vec::new();
    if r.id != IdKind::DEFAULT {
        differs.push(quote!(id: #id));
    }
    if r.owner.is_some() {
        differs.push(quote!(owner: #owner));
    }
    if principal {
        differs.push(quote!(principal: true));
    }
    if !timestamps {
        differs.push(quote!(timestamps: false));
    }
    if r.envelope.value != Envelope::Key(Envelope::DEFAULT_KEY.to_owned()) {
        differs.push(quote!(envelope: #envelope));
    }
    if !reject {
        differs.push(quote!(reject_unknown: false));
    }
    if r.operations != Operation::ALL {
        differs.push(quote!(operations: &[#(#operations),*]));
    }
    if let Some(lifecycle) = lifecycle {
        differs.push(quote!(lifecycle: #lifecycle));
    }
    if r.links.value {
        differs.push(quote!(links: true));
    }
    if r.feed.value {
        differs.push(quote!(feed: true));
    }
    if !r.events.is_empty() {
        let events = r.events.iter().map(|e| &e.value);
        differs.push(quote!(events: &[#(#events),*]));
    }
    if hide {
        differs.push(quote!(hide_not_owned: true));
    }
    if !parents.is_empty() {
        differs.push(quote!(parents: &[#(#parents),*]));
    }
    if r.rate_limit.is_some() {
        differs.push(quote!(rate_limit: #limit));
    }
    if !r.former_paths.is_empty() {
        let former = r.former_paths.iter().map(|p| &p.value);
        differs.push(quote!(former_paths: &[#(#former),*]));
    }
    if r.require_if_match.value {
        differs.push(quote!(require_if_match: true));
    }
    if let Some(gate) = gate(&r.gate) {
        differs.push(quote!(gate: #gate));
    }
    if r.formats.value != [Format::Json] {
        let formats = r.formats.value.iter().map(|f| variant("Format", f.variant()));
        differs.push(quote!(formats: &[#(#formats),*]));
    }
    quote! {
        #[doc = #doc]
        pub static #ident: ResourceSpec = ResourceSpec {
            name: #name,
            path: #path,
            fields: &[#(#fields),*],
            pagination: PaginationSpec { style: #style, default_size: #default_size, max_size: #max_size, max_cursor: #max_cursor },
            access: AccessSpec { create: #create, read: #read, write: #write, delete: #delete },
            cache_control: #cache_control,
            #(#differs,)*
            ..ResourceSpec::DEFAULT
        };
    }
}

fn id_kind(kind: IdKind) -> TokenStream {
    variant("IdKind", kind.variant())
}

/// One field's spec; `refer` reaches the resource a ref names (its spec, which the runtime
/// asks who may read), `None` for a form's field, which names no record to check.
pub(crate) fn field(service: &Service, r: &Resource, f: &Field, refer: Option<&Refer>) -> TokenStream {
    let name = &f.name.value;
    let kind = variant("FieldKind", f.ty.value.kind().variant());
    let required = f.required.value;
    let nullable = f.nullable.value;
    let optional = f.optional();
    let default = match &f.default {
        Some(d) => match &d.value {
            DefaultValue::Now => quote!(::core::option::Option::Some(DefaultValue::Now)),
            DefaultValue::Value(v) => {
                let text = v.to_string();
                quote!(::core::option::Option::Some(DefaultValue::Value(#text)))
            }
        },
        None => quote!(::core::option::Option::None),
    };
    let create = r.settable_in(f, WriteOp::Create);
    let replace = r.settable_in(f, WriteOp::Replace);
    let patch = r.settable_in(f, WriteOp::Patch);
    let write_only = f.write_only;
    let unique = f.unique.value;
    let unique_global = f.unique.value && f.unique_global;
    let float = |v: &Option<crate::Located<f64>>| match v {
        Some(v) => {
            let lit = Literal::f64_unsuffixed(v.value);
            quote!(::core::option::Option::Some(#lit))
        }
        None => quote!(::core::option::Option::None),
    };
    let int = |v: &Option<crate::Located<u64>>| match v {
        Some(v) => {
            let lit = Literal::u64_unsuffixed(v.value);
            quote!(::core::option::Option::Some(#lit))
        }
        None => quote!(::core::option::Option::None),
    };
    let max_length = match f.effective_max_length() {
        Some(n) => {
            let lit = Literal::u64_unsuffixed(n);
            quote!(::core::option::Option::Some(#lit))
        }
        None => quote!(::core::option::Option::None),
    };
    let (min, max, min_length) = (float(&f.min), float(&f.max), int(&f.min_length));
    let pattern = match &f.pattern {
        Some(p) => {
            let p = &p.value;
            quote!(::core::option::Option::Some(#p))
        }
        None => quote!(::core::option::Option::None),
    };
    // A roles field holds declared roles only: they are its values.
    let values: Vec<&String> = match (&f.ty.value, &service.auth) {
        (FieldType::Roles, Some(auth)) => auth.roles.iter().map(|r| &r.value).collect(),
        _ => f.ty.value.values().iter().map(|v| &v.value).collect(),
    };
    let to = match &f.ty.value {
        FieldType::Ref { to } => match service.resource(&to.value) {
            Some(t) => {
                let (tname, tid) = (&t.name.value, id_kind(t.id));
                quote!(::core::option::Option::Some((#tname, #tid)))
            }
            None => quote!(::core::option::Option::None),
        },
        _ => quote!(::core::option::Option::None),
    };
    // A resource naming itself names the static being defined: through its derive's
    // `SPEC` it would be a constant evaluating itself.
    let target = match (&f.ty.value, refer) {
        (FieldType::Ref { to }, Some(_)) if to.value == r.name.value => {
            let ident = static_ident(r);
            Some(quote!(::core::option::Option::Some(Target(&#ident))))
        }
        (FieldType::Ref { to }, Some(refer)) => service.resource(&to.value).map(|t| {
            let (spec, _) = refer(t);
            quote!(::core::option::Option::Some(Target(#spec)))
        }),
        _ => None,
    };
    let (filter, sort) = (f.filter.value, f.sort.value);
    let access = |list: &Option<Vec<crate::Located<AccessRule>>>| {
        list.as_deref().map(|list| {
            let rules = rules(list);
            quote!(::core::option::Option::Some(#rules))
        })
    };
    // What differs from `FieldSpec::DEFAULT` (every flag off, no bounds), and only that,
    // in the struct's order.
    let flag = |on: bool| on.then(|| quote!(true));
    let some = |t: TokenStream| (t.to_string() != quote!(::core::option::Option::None).to_string()).then_some(t);
    let values = (!values.is_empty()).then(|| quote!(&[#(#values),*]));
    let differs = [
        ("required", flag(required)),
        ("nullable", flag(nullable)),
        ("optional", flag(optional)),
        ("default", some(default)),
        ("create", flag(create)),
        ("replace", flag(replace)),
        ("patch", flag(patch)),
        ("write_only", flag(write_only)),
        ("unique", flag(unique)),
        ("unique_global", flag(unique_global)),
        ("min", some(min)),
        ("max", some(max)),
        ("min_length", some(min_length)),
        ("max_length", some(max_length)),
        ("pattern", some(pattern)),
        ("values", values),
        ("to", some(to)),
        ("target", target),
        ("filter", flag(filter)),
        ("sort", flag(sort)),
        ("gate", gate(&f.gate)),
        ("read", access(&f.read)),
        ("write", access(&f.write)),
    ]
    .into_iter()
    .filter_map(|(key, value)| {
        let (key, value) = (format_ident!("{key}"), value?);
        Some(quote!(#key: #value))
    });
    quote! {
        FieldSpec {
            name: #name,
            kind: #kind,
            #(#differs,)*
            ..FieldSpec::DEFAULT
        }
    }
}

/// An access list as the runtime's rules: `&[Rule::Owner, Rule::Role("hr")]`.
fn rules(list: &[crate::Located<AccessRule>]) -> TokenStream {
    let items = list.iter().map(|rule| match &rule.value {
        AccessRule::Anyone => quote!(Rule::Anyone),
        AccessRule::Authenticated => quote!(Rule::Authenticated),
        AccessRule::Owner => quote!(Rule::Owner),
        AccessRule::Role(role) => quote!(Rule::Role(#role)),
    });
    quote!(&[#(#items),*])
}
