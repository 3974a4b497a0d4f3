//! A resource's own facts from `#[resource(...)]`, each default applied as the YAML
//! front-end applies it: operations, access, paging, envelope, formats, caching, the
//! lifecycle, rate limits and the versions that serve it.

use super::fields::StructFields;
use super::{Context, at, choose, located, resource_name};
use crate::attr::{self, ResourceAttrs, Sp};
use crate::errors::Errors;
use proc_macro2::Span;
use restgen_core::diagnostics::codes;
use restgen_core::model::*;
use restgen_core::origin::{Located, Origin};
use std::time::Duration;
use syn::DeriveInput;
use syn::spanned::Spanned;

/// The resource `attrs` and `read` describe, named `name`, its collection at `path`.
pub(super) fn resource(
    input: &DeriveInput,
    attrs: &ResourceAttrs,
    cx: &Context,
    read: &StructFields,
    name: Located<String>,
    path: Located<String>,
    errors: &mut Errors,
) -> Resource {
    let origin = at(input.ident.span());
    let owner = attrs.owner.as_ref().map(|p| Located::new(resource_name(p), at(p.span())));
    let states = attrs.states.as_ref().map(|s| states(s, errors));
    let fields = read.settled(states.as_ref(), errors);
    let operations = match &attrs.operations {
        Some(words) => {
            let mut ops: Vec<Operation> = words.iter().filter_map(|w| choose(w, "operation", errors)).collect();
            ops.sort();
            ops.dedup();
            ops
        }
        None => Operation::ALL.to_vec(),
    };
    let access = access(attrs, owner.is_some(), cx, &origin);
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
    let flag = |f: &Option<Sp<bool>>| f.clone().map_or_else(|| Located::new(false, origin.clone()), located);
    Resource {
        renamed_from: attrs.renamed_from.clone().map(located),
        description: attrs.description.clone(),
        path,
        operations,
        fields,
        id: read.id,
        timestamps: read.timestamps,
        owner,
        nested_under: attrs.nested_under.iter().map(|p| Located::new(resource_name(p), at(p.span()))).collect(),
        access,
        not_owned,
        pagination,
        envelope,
        formats,
        cache,
        unknown_fields,
        former_paths: attrs.former_paths.iter().cloned().map(located).collect(),
        require_if_match: flag(&attrs.require_if_match),
        states,
        status_endpoint: flag(&attrs.status_endpoint),
        events: attrs.events.iter().cloned().map(located).collect(),
        links: flag(&attrs.links),
        feed: flag(&attrs.feed),
        rate_limit,
        gate: gate(attrs.since.as_ref(), attrs.until.as_ref(), errors),
        name,
        origin,
    }
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

pub(super) fn gate(since: Option<&Sp<u64>>, until: Option<&Sp<u64>>, errors: &mut Errors) -> Gate {
    let version = |v: &Sp<u64>, errors: &mut Errors| match u32::try_from(v.value) {
        Ok(n) => Some(Located::new(n, at(v.span))),
        Err(_) => {
            errors.at(codes::INVALID_VALUE, v.span, "a version is a whole number that fits in 32 bits");
            None
        }
    };
    Gate { since: since.and_then(|v| version(v, errors)), until: until.and_then(|v| version(v, errors)) }
}
