//! Reading `#[resource(...)]` and `#[field(...)]`: every key of the schema format that
//! applies to one resource, each value with the span it was written at. Words are
//! checked against their choices later, while lowering; here only the shape is read.
//! An unknown key is an error with a "did you mean" hint, like the YAML front-end's; the
//! keys each attribute takes are the vocabulary's (`restgen_core::vocabulary`).

use crate::errors::{Errors, text};
use proc_macro2::Span;
use restgen_core::diagnostics::codes;
use restgen_core::diagnostics::did_you_mean;
use restgen_core::model::WriteOp;
use restgen_core::vocabulary::{self as vocab, Fronts, Table};
use restgen_core::words::Word;
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::ParseStream;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Expr, ExprLit, ExprUnary, Ident, Lit, LitStr, Token, UnOp};

/// A value and where it was written.
#[derive(Clone, Debug)]
pub(crate) struct Sp<T> {
    pub value: T,
    pub span: Span,
}

impl<T> Sp<T> {
    pub fn new(value: T, span: Span) -> Self {
        Sp { value, span }
    }
}

#[derive(Default)]
pub(crate) struct ResourceAttrs {
    pub name: Option<Sp<String>>,
    pub path: Option<Sp<String>>,
    pub description: Option<String>,
    pub operations: Option<Vec<Sp<String>>>,
    pub owner: Option<syn::Path>,
    /// `principal(identifier = email)`: the resource holds the accounts callers sign in as.
    pub principal: Option<Sp<Option<Sp<String>>>>,
    pub nested_under: Vec<syn::Path>,
    /// `(key, rules)`, `all` included, in the order written.
    pub access: Vec<(Sp<String>, Vec<Sp<String>>)>,
    pub access_span: Option<Span>,
    pub not_owned: Option<Sp<String>>,
    pub pagination: Option<PaginationAttrs>,
    pub envelope: Option<Sp<String>>,
    pub formats: Option<Sp<Vec<Sp<String>>>>,
    pub cache: Option<CacheAttrs>,
    pub unknown_fields: Option<Sp<String>>,
    pub former_paths: Vec<Sp<String>>,
    pub renamed_from: Option<Sp<String>>,
    pub require_if_match: Option<Sp<bool>>,
    pub states: Option<StatesAttrs>,
    pub status_endpoint: Option<Sp<bool>>,
    pub events: Vec<Sp<String>>,
    pub links: Option<Sp<bool>>,
    pub feed: Option<Sp<bool>>,
    pub rate_limit: Option<RateAttrs>,
    pub since: Option<Sp<u64>>,
    pub until: Option<Sp<u64>>,
}

pub(crate) struct PaginationAttrs {
    pub style: Option<Sp<String>>,
    pub default_size: Option<Sp<u64>>,
    pub max_size: Option<Sp<u64>>,
    pub span: Span,
}

pub(crate) struct CacheAttrs {
    pub max_age: Option<Sp<String>>,
    pub visibility: Option<Sp<String>>,
    pub span: Span,
}

pub(crate) struct StatesAttrs {
    pub field: Option<Sp<String>>,
    pub initial: Option<Sp<String>>,
    pub transitions: Vec<TransitionAttrs>,
    pub span: Span,
}

pub(crate) struct TransitionAttrs {
    pub name: Sp<String>,
    pub from: Vec<Sp<String>>,
    pub to: Option<Sp<String>>,
    pub roles: Vec<Sp<String>>,
}

pub(crate) struct RateAttrs {
    pub algorithm: Option<Sp<String>>,
    pub capacity: Option<Sp<u64>>,
    pub refill_per_second: Option<Sp<f64>>,
    pub leak_per_second: Option<Sp<f64>>,
    pub limit: Option<Sp<u64>>,
    pub window: Option<Sp<String>>,
    pub key: Option<Sp<String>>,
    pub span: Span,
}

#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub settable: Option<Sp<Vec<Sp<String>>>>,
    /// `settable = false`.
    pub not_settable: Option<Span>,
    pub required: Option<Sp<bool>>,
    pub nullable: Option<Sp<bool>>,
    pub default: Option<Sp<DefaultAttr>>,
    pub min: Option<Sp<f64>>,
    pub max: Option<Sp<f64>>,
    pub min_length: Option<Sp<u64>>,
    pub max_length: Option<Sp<u64>>,
    pub pattern: Option<Sp<String>>,
    pub unique: Option<Sp<bool>>,
    /// `unique = "global"`: one value across every owner's records.
    pub unique_global: bool,
    pub renamed_from: Option<Sp<String>>,
    pub filter: Option<Sp<bool>>,
    pub sort: Option<Sp<bool>>,
    pub read_only: Option<Sp<bool>>,
    pub write_only: Option<Sp<bool>>,
    /// `read(owner, hr)`: who may see the field.
    pub read: Option<Sp<Vec<Sp<String>>>>,
    /// `write(hr)`: who may set it.
    pub write: Option<Sp<Vec<Sp<String>>>>,
    pub values: Option<Sp<Vec<Sp<String>>>>,
    pub reference: Option<syn::Path>,
    /// `text`, `email`, `url`, `password`, `json` or `roles`: the schema type where the
    /// Rust type alone does not say it.
    pub kind: Option<Sp<String>>,
    pub description: Option<String>,
    pub since: Option<Sp<u64>>,
    pub until: Option<Sp<u64>>,
    /// Where `#[field]` was written, for problems of the attribute as a whole.
    pub span: Option<Span>,
}

#[derive(Clone, Debug)]
pub(crate) enum DefaultAttr {
    Now,
    Value(serde_json::Value),
}

/// The text of the `///` comments among `attrs`, lines joined, `None` without any.
pub(crate) fn doc(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit { lit: Lit::Str(s), .. }) => Some(s.value().trim().to_owned()),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// An unknown key: an error naming it, with the closest key `table` has.
fn unknown(meta: &ParseNestedMeta, what: &str, table: &Table) -> syn::Error {
    let known = table.names(Fronts::Derive);
    let name = meta.path.get_ident().map_or_else(|| "?".to_owned(), |i| i.unraw().to_string());
    let hint = match did_you_mean(&name, known.iter().copied()) {
        Some(m) => format!("did you mean `{m}`?"),
        None => format!("known keys: {}", known.join(", ")),
    };
    meta.error(text(codes::UNKNOWN_KEY, &format!("unknown key `{name}` in {what}; {hint}")))
}

fn key(meta: &ParseNestedMeta) -> String {
    meta.path.get_ident().map_or_else(String::new, |i| i.unraw().to_string())
}

/// `key = "text"`.
fn string(meta: &ParseNestedMeta) -> syn::Result<Sp<String>> {
    let s: LitStr = meta.value()?.parse()?;
    Ok(Sp::new(s.value(), s.span()))
}

/// `key = word` or `key = "word"`.
fn word(meta: &ParseNestedMeta) -> syn::Result<Sp<String>> {
    word_in(meta.value()?)
}

fn word_in(input: ParseStream) -> syn::Result<Sp<String>> {
    if input.peek(LitStr) {
        let s: LitStr = input.parse()?;
        return Ok(Sp::new(s.value(), s.span()));
    }
    let ident = Ident::parse_any(input)?;
    Ok(Sp::new(ident.unraw().to_string(), ident.span()))
}

/// `key(a, b, "c")`.
fn words(meta: &ParseNestedMeta) -> syn::Result<Vec<Sp<String>>> {
    let content;
    syn::parenthesized!(content in meta.input);
    let list = Punctuated::<Sp<String>, Token![,]>::parse_terminated_with(&content, word_in)?;
    Ok(list.into_iter().collect())
}

/// `key = [a, b]`.
fn word_list(meta: &ParseNestedMeta) -> syn::Result<Vec<Sp<String>>> {
    let value = meta.value()?;
    let content;
    syn::bracketed!(content in value);
    let list = Punctuated::<Sp<String>, Token![,]>::parse_terminated_with(&content, word_in)?;
    Ok(list.into_iter().collect())
}

/// `key(A, b::C)`: type paths.
fn paths(meta: &ParseNestedMeta) -> syn::Result<Vec<syn::Path>> {
    let content;
    syn::parenthesized!(content in meta.input);
    Ok(Punctuated::<syn::Path, Token![,]>::parse_terminated(&content)?.into_iter().collect())
}

/// `key = 12`.
fn integer(meta: &ParseNestedMeta) -> syn::Result<Sp<u64>> {
    let lit: syn::LitInt = meta.value()?.parse()?;
    Ok(Sp::new(lit.base10_parse()?, lit.span()))
}

/// `key = 1.5`, `key = -3`.
fn number(meta: &ParseNestedMeta) -> syn::Result<Sp<f64>> {
    let expr: Expr = meta.value()?.parse()?;
    let span = expr.span();
    match literal(&expr) {
        Some(serde_json::Value::Number(n)) => Ok(Sp::new(n.as_f64().unwrap_or_default(), span)),
        _ => Err(syn::Error::new(span, text(codes::WRONG_TYPE, "expected a number"))),
    }
}

/// `flag` or `flag = true|false`.
/// `unique`, `unique = true|false` or `unique = "global"`: whether the field is unique,
/// and whether across owners.
fn unique(meta: &ParseNestedMeta) -> syn::Result<(Sp<bool>, bool)> {
    if meta.input.peek(Token![=]) && meta.input.peek2(syn::LitStr) {
        let s: syn::LitStr = meta.value()?.parse()?;
        if s.value() != restgen_core::vocabulary::UNIQUE_GLOBAL {
            return Err(syn::Error::new(s.span(), "`unique` is a flag, `= true`/`= false`, or `= \"global\"`"));
        }
        return Ok((Sp::new(true, s.span()), true));
    }
    Ok((flag(meta)?, false))
}

fn flag(meta: &ParseNestedMeta) -> syn::Result<Sp<bool>> {
    if meta.input.peek(Token![=]) {
        let b: syn::LitBool = meta.value()?.parse()?;
        return Ok(Sp::new(b.value, b.span));
    }
    Ok(Sp::new(true, meta.path.span()))
}

/// A literal's JSON value: strings, numbers (negative ones too), booleans.
fn literal(expr: &Expr) -> Option<serde_json::Value> {
    match expr {
        Expr::Lit(ExprLit { lit, .. }) => match lit {
            Lit::Str(s) => Some(s.value().into()),
            Lit::Bool(b) => Some(b.value.into()),
            Lit::Int(i) => i.base10_parse::<i64>().ok().map(Into::into),
            Lit::Float(f) => f.base10_parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Into::into),
            _ => None,
        },
        Expr::Unary(ExprUnary { op: UnOp::Neg(_), expr, .. }) => match literal(expr)? {
            serde_json::Value::Number(n) => n
                .as_i64()
                .map(|i| (-i).into())
                .or_else(|| n.as_f64().and_then(|f| serde_json::Number::from_f64(-f)).map(Into::into)),
            _ => None,
        },
        Expr::Group(g) => literal(&g.expr),
        _ => None,
    }
}

/// Keeps the first value of a key and reports a repeat.
fn once<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta, errors: &mut Errors) {
    if slot.is_some() {
        errors.push(meta.error(text(codes::DUPLICATE_KEY, &format!("`{}` is given twice", key(meta)))));
    } else {
        *slot = Some(value);
    }
}

/// Every `#[resource(...)]` on the struct.
pub(crate) fn resource(attrs: &[Attribute], errors: &mut Errors) -> ResourceAttrs {
    let mut out = ResourceAttrs { description: doc(attrs), ..ResourceAttrs::default() };
    for attr in attrs.iter().filter(|a| a.path().is_ident("resource")) {
        let parsed = attr.parse_nested_meta(|meta| {
            resource_key(&meta, &mut out, errors);
            Ok(())
        });
        errors.ok(parsed);
    }
    out
}

fn resource_key(meta: &ParseNestedMeta, out: &mut ResourceAttrs, errors: &mut Errors) {
    let k = key(meta);
    let result: syn::Result<()> = (|| {
        match k.as_str() {
            "name" => once(&mut out.name, string(meta)?, meta, errors),
            "path" => once(&mut out.path, string(meta)?, meta, errors),
            "description" => out.description = Some(string(meta)?.value),
            "operations" => once(&mut out.operations, words(meta)?, meta, errors),
            "owner" => once(&mut out.owner, meta.value()?.parse()?, meta, errors),
            "principal" => {
                let mut identifier = None;
                if meta.input.peek(syn::token::Paren) {
                    meta.parse_nested_meta(|inner| {
                        if key(&inner) != "identifier" {
                            return Err(unknown(&inner, "`principal`", &vocab::PRINCIPAL));
                        }
                        identifier = Some(word(&inner)?);
                        Ok(())
                    })?;
                }
                once(&mut out.principal, Sp::new(identifier, meta.path.span()), meta, errors);
            }
            "nested_under" => out.nested_under.extend(paths(meta)?),
            "access" => {
                out.access_span = Some(meta.path.span());
                meta.parse_nested_meta(|inner| {
                    let k = key(&inner);
                    if !vocab::ACCESS.names(Fronts::Derive).contains(&k.as_str()) {
                        return Err(unknown(&inner, "`access`", &vocab::ACCESS));
                    }
                    let span = inner.path.span();
                    out.access.push((Sp::new(k, span), word_list(&inner)?));
                    Ok(())
                })?;
            }
            "not_owned" => once(&mut out.not_owned, word(meta)?, meta, errors),
            "pagination" => {
                let mut p = PaginationAttrs { style: None, default_size: None, max_size: None, span: meta.path.span() };
                meta.parse_nested_meta(|inner| {
                    match key(&inner).as_str() {
                        "style" => p.style = Some(word(&inner)?),
                        "default_size" => p.default_size = Some(integer(&inner)?),
                        "max_size" => p.max_size = Some(integer(&inner)?),
                        _ => return Err(unknown(&inner, "`pagination`", &vocab::PAGINATION)),
                    }
                    Ok(())
                })?;
                once(&mut out.pagination, p, meta, errors);
            }
            "envelope" => once(&mut out.envelope, word(meta)?, meta, errors),
            "formats" => once(&mut out.formats, Sp::new(words(meta)?, meta.path.span()), meta, errors),
            "cache" => {
                let mut c = CacheAttrs { max_age: None, visibility: None, span: meta.path.span() };
                meta.parse_nested_meta(|inner| {
                    match key(&inner).as_str() {
                        "max_age" => c.max_age = Some(string(&inner)?),
                        "visibility" => c.visibility = Some(word(&inner)?),
                        _ => return Err(unknown(&inner, "`cache`", &vocab::CACHE)),
                    }
                    Ok(())
                })?;
                once(&mut out.cache, c, meta, errors);
            }
            "unknown_fields" => once(&mut out.unknown_fields, word(meta)?, meta, errors),
            "former_paths" => out.former_paths.extend(words(meta)?),
            "renamed_from" => once(&mut out.renamed_from, string(meta)?, meta, errors),
            "require_if_match" => once(&mut out.require_if_match, flag(meta)?, meta, errors),
            "states" => {
                let s = states(meta)?;
                once(&mut out.states, s, meta, errors);
            }
            "status_endpoint" => once(&mut out.status_endpoint, flag(meta)?, meta, errors),
            "events" => out.events.extend(words(meta)?),
            "links" => once(&mut out.links, flag(meta)?, meta, errors),
            "feed" => once(&mut out.feed, flag(meta)?, meta, errors),
            "rate_limit" => {
                let r = rate_limit(meta)?;
                once(&mut out.rate_limit, r, meta, errors);
            }
            "since" => once(&mut out.since, integer(meta)?, meta, errors),
            "until" => once(&mut out.until, integer(meta)?, meta, errors),
            _ => return Err(unknown(meta, "`#[resource]`", &vocab::RESOURCE)),
        }
        Ok(())
    })();
    if let Err(e) = result {
        errors.push(e);
        skip_value(meta);
    }
}

/// After a bad key, its value (`= ...` or `(...)`) is skipped so the keys after it are
/// still read.
fn skip_value(meta: &ParseNestedMeta) {
    let _ = meta.input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if let proc_macro2::TokenTree::Punct(p) = &tt
                && p.as_char() == ','
            {
                return Ok(((), rest));
            }
            rest = next;
        }
        Ok(((), rest))
    });
}

fn states(meta: &ParseNestedMeta) -> syn::Result<StatesAttrs> {
    let mut s = StatesAttrs { field: None, initial: None, transitions: Vec::new(), span: meta.path.span() };
    meta.parse_nested_meta(|inner| {
        match key(&inner).as_str() {
            "field" => s.field = Some(word(&inner)?),
            "initial" => s.initial = Some(word(&inner)?),
            "transitions" => inner.parse_nested_meta(|t| {
                let name = Sp::new(key(&t), t.path.span());
                let mut tr = TransitionAttrs { name, from: Vec::new(), to: None, roles: Vec::new() };
                t.parse_nested_meta(|part| {
                    match key(&part).as_str() {
                        "from" => tr.from.extend(words(&part)?),
                        "to" => tr.to = Some(word(&part)?),
                        "roles" => tr.roles.extend(words(&part)?),
                        _ => return Err(unknown(&part, "a transition", &vocab::TRANSITION)),
                    }
                    Ok(())
                })?;
                s.transitions.push(tr);
                Ok(())
            })?,
            _ => return Err(unknown(&inner, "`states`", &vocab::STATES)),
        }
        Ok(())
    })?;
    Ok(s)
}

fn rate_limit(meta: &ParseNestedMeta) -> syn::Result<RateAttrs> {
    let mut r = RateAttrs {
        algorithm: None,
        capacity: None,
        refill_per_second: None,
        leak_per_second: None,
        limit: None,
        window: None,
        key: None,
        span: meta.path.span(),
    };
    meta.parse_nested_meta(|inner| {
        match key(&inner).as_str() {
            "algorithm" => r.algorithm = Some(word(&inner)?),
            "capacity" => r.capacity = Some(integer(&inner)?),
            "refill_per_second" => r.refill_per_second = Some(number(&inner)?),
            "leak_per_second" => r.leak_per_second = Some(number(&inner)?),
            "limit" => r.limit = Some(integer(&inner)?),
            "window" => r.window = Some(string(&inner)?),
            "key" => r.key = Some(word(&inner)?),
            _ => return Err(unknown(&inner, "`rate_limit`", &vocab::RATE_LIMIT)),
        }
        Ok(())
    })?;
    Ok(r)
}

/// Every `#[field(...)]` on one struct field.
pub(crate) fn field(attrs: &[Attribute], errors: &mut Errors) -> FieldAttrs {
    let mut out = FieldAttrs { description: doc(attrs), ..FieldAttrs::default() };
    for attr in attrs.iter().filter(|a| a.path().is_ident("field")) {
        out.span.get_or_insert(attr.span());
        let parsed = attr.parse_nested_meta(|meta| {
            field_key(&meta, &mut out, errors);
            Ok(())
        });
        errors.ok(parsed);
    }
    out
}

fn field_key(meta: &ParseNestedMeta, out: &mut FieldAttrs, errors: &mut Errors) {
    let k = key(meta);
    let result: syn::Result<()> = (|| {
        match k.as_str() {
            "settable" => {
                let span = meta.path.span();
                if meta.input.peek(syn::token::Paren) {
                    once(&mut out.settable, Sp::new(words(meta)?, span), meta, errors);
                } else if flag(meta)?.value {
                    let all = <WriteOp as Word>::WORDS.iter().map(|w| Sp::new((*w).to_owned(), span)).collect();
                    once(&mut out.settable, Sp::new(all, span), meta, errors);
                } else {
                    out.not_settable = Some(span);
                }
            }
            "required" => once(&mut out.required, flag(meta)?, meta, errors),
            "nullable" => once(&mut out.nullable, flag(meta)?, meta, errors),
            "default" => {
                let expr: Expr = meta.value()?.parse()?;
                let span = expr.span();
                let value = match &expr {
                    Expr::Path(p) if p.path.is_ident("now") => DefaultAttr::Now,
                    other => DefaultAttr::Value(literal(other).ok_or_else(|| {
                        syn::Error::new(
                            span,
                            text(
                                codes::WRONG_TYPE,
                                "a default is a literal: a string, a number, `true`, `false`, or `now`",
                            ),
                        )
                    })?),
                };
                once(&mut out.default, Sp::new(value, span), meta, errors);
            }
            "min" => once(&mut out.min, number(meta)?, meta, errors),
            "max" => once(&mut out.max, number(meta)?, meta, errors),
            "min_length" => once(&mut out.min_length, integer(meta)?, meta, errors),
            "max_length" => once(&mut out.max_length, integer(meta)?, meta, errors),
            "pattern" => once(&mut out.pattern, string(meta)?, meta, errors),
            "unique" => {
                let (unique, global) = unique(meta)?;
                out.unique_global |= global;
                once(&mut out.unique, unique, meta, errors)
            }
            "renamed_from" => once(&mut out.renamed_from, string(meta)?, meta, errors),
            "filter" => once(&mut out.filter, flag(meta)?, meta, errors),
            "sort" => once(&mut out.sort, flag(meta)?, meta, errors),
            "read_only" => once(&mut out.read_only, flag(meta)?, meta, errors),
            "write_only" => once(&mut out.write_only, flag(meta)?, meta, errors),
            "values" => {
                let span = meta.path.span();
                once(&mut out.values, Sp::new(words(meta)?, span), meta, errors);
            }
            "read" => {
                let span = meta.path.span();
                once(&mut out.read, Sp::new(words(meta)?, span), meta, errors);
            }
            "write" => {
                let span = meta.path.span();
                once(&mut out.write, Sp::new(words(meta)?, span), meta, errors);
            }
            "ref" => once(&mut out.reference, meta.value()?.parse()?, meta, errors),
            "text" | "email" | "url" | "password" | "json" | "roles" => {
                let kind = Sp::new(k.clone(), meta.path.span());
                if let Some(first) = &out.kind {
                    errors.at(
                        codes::CONFLICTING_FLAGS,
                        kind.span,
                        format!("`{}` and `{}` are both given; a field has one type", first.value, k),
                    );
                } else {
                    out.kind = Some(kind);
                }
            }
            "description" => out.description = Some(string(meta)?.value),
            "since" => once(&mut out.since, integer(meta)?, meta, errors),
            "until" => once(&mut out.until, integer(meta)?, meta, errors),
            _ => return Err(unknown(meta, "`#[field]`", &vocab::FIELD)),
        }
        Ok(())
    })();
    if let Err(e) = result {
        errors.push(e);
        skip_value(meta);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads one kind of attribute.
    type Reader = fn(&[Attribute], &mut Errors);
    /// Writes an attribute holding one key (a bare key: its value may be wrong, its name is
    /// what is judged).
    type Writer = fn(&str) -> String;

    /// The problems reading `attr` reports.
    fn problems(attr: Attribute, read: Reader) -> Vec<String> {
        let mut errors = Errors::default();
        read(&[attr], &mut errors);
        match errors.finish() {
            Ok(()) => Vec::new(),
            Err(e) => e.into_iter().map(|e| e.to_string()).collect(),
        }
    }

    /// Every key the vocabulary gives the derive is read (its value may be wrong, its name
    /// is not unknown), and a key it does not give is refused; for each attribute and each
    /// nested map, so that the vocabulary and the derive cannot drift apart.
    #[test]
    fn the_derive_reads_the_vocabulary_keys() {
        let resource = |a: &[Attribute], e: &mut Errors| drop(super::resource(a, e));
        let field = |a: &[Attribute], e: &mut Errors| drop(super::field(a, e));
        let places: [(&Table, Writer, Reader); 9] = [
            (&vocab::RESOURCE, |k| format!("#[resource({k})]"), resource),
            (&vocab::PRINCIPAL, |k| format!("#[resource(principal({k}))]"), resource),
            (&vocab::ACCESS, |k| format!("#[resource(access({k}))]"), resource),
            (&vocab::PAGINATION, |k| format!("#[resource(pagination({k}))]"), resource),
            (&vocab::CACHE, |k| format!("#[resource(cache({k}))]"), resource),
            (&vocab::STATES, |k| format!("#[resource(states({k}))]"), resource),
            (&vocab::TRANSITION, |k| format!("#[resource(states(transitions(pay({k}))))]"), resource),
            (&vocab::RATE_LIMIT, |k| format!("#[resource(rate_limit({k}))]"), resource),
            (&vocab::FIELD, |k| format!("#[field({k})]"), field),
        ];
        for (table, write, read) in places {
            let names = table.names(Fronts::Derive);
            assert!(!names.is_empty(), "`{}` has keys for the derive", table.name);
            for name in names.iter().copied().chain(["not_a_key"]) {
                let text = write(name);
                let attr: Attribute =
                    syn::parse::Parser::parse_str(Attribute::parse_outer, &text).expect("an attribute")[0].clone();
                let unknown = problems(attr, read).iter().any(|p| p.starts_with("unknown key"));
                assert_eq!(unknown, name == "not_a_key", "{text}: {}", if unknown { "refused" } else { "accepted" });
            }
        }
    }
}
