//! Who may call an operation, in words: its access rules as the runtime applies them,
//! written into each operation's `description`.

use restgen_model::Located;
use restgen_model::model::*;
use serde_json::{Map, Value, json};

/// Where an operation reaches: what `owner` in its rules means there.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// `POST` of the collection: the new record becomes the caller's.
    Create,
    /// `GET` of a collection, or of a parent's children: the caller's own records alone.
    List,
    /// One record: its owner, or the account itself.
    Item,
}

impl Reach {
    /// The reach of `method` on a collection path (`item: false`) or an item path.
    fn of(method: &str, item: bool) -> Reach {
        match (method, item) {
            (_, true) => Reach::Item,
            ("post", false) => Reach::Create,
            _ => Reach::List,
        }
    }
}

/// `a`, `a or b`, `a, b or c`.
fn or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} or {last}", rest.join(", ")),
    }
}

/// Who may call each operation of `ops` (a path item), as its `description`, in the
/// terms the runtime applies them (`access.rs`): `owner` lets any signed-in caller create
/// (and own what they create) and list (their own records alone), and reach one record
/// only where it is theirs; the admin roles may do everything.
pub(crate) fn describe(service: &Service, r: &Resource, ops: &mut Map<String, Value>, item: bool) {
    for (method, op) in ops.iter_mut() {
        let rules = match method.as_str() {
            "post" => &r.access.create,
            "get" => &r.access.read,
            "put" | "patch" => &r.access.write,
            _ => &r.access.delete,
        };
        op["description"] = json!(who_may(service, r, rules, Reach::of(method, item)));
    }
}

/// The sentence `describe` writes for one operation.
pub(crate) fn who_may(service: &Service, r: &Resource, rules: &[Located<AccessRule>], reach: Reach) -> String {
    let Some(auth) = &service.auth else { return "Open to anyone: the service has no auth.".to_owned() };
    let has = |rule: &AccessRule| rules.iter().any(|r| &r.value == rule);
    let plural = r.plural_noun();
    if has(&AccessRule::Anyone) {
        return "Open to anyone, signed in or not.".to_owned();
    }
    let roles = roles(auth, rules);
    let everyone = has(&AccessRule::Authenticated);
    let owner = has(&AccessRule::Owner) && !everyone;
    let noun = r.noun();
    let owned = r.owner.is_some();
    let mut text = if everyone {
        "Allowed to any signed-in caller.".to_owned()
    } else if owner {
        // Admins are signed-in callers too: a create is theirs like anybody's.
        let mine = match reach {
            Reach::Create if owned => {
                format!(
                    "any signed-in caller; the new {noun} is theirs (`owner_id` comes from the credentials, never from the body)"
                )
            }
            Reach::Create => "any signed-in caller".to_owned(),
            Reach::List if owned => format!("any signed-in caller, who sees only their own {plural}"),
            Reach::List => "any signed-in caller, who sees only their own account".to_owned(),
            Reach::Item if owned => format!("the {noun}'s owner"),
            Reach::Item => "the account itself".to_owned(),
        };
        match (reach, roles.is_empty()) {
            (Reach::Create, _) | (_, true) => format!("Allowed to {mine}."),
            (Reach::List, false) => format!("Allowed to {mine}, and to {}, who see all of them.", with_roles(&roles)),
            (Reach::Item, false) => format!("Allowed to {mine} and to {}.", with_roles(&roles)),
        }
    } else if roles.is_empty() {
        "Allowed to nobody: no rule admits a caller.".to_owned()
    } else {
        format!("Allowed only to {}; other callers get 403.", with_roles(&roles))
    };
    if owner && reach == Reach::Item {
        let hidden = if r.not_owned == NotOwned::NotFound { "404, as if it did not exist" } else { "403" };
        let whose = if owned { format!("Somebody else's {noun}") } else { "Another account".to_owned() };
        text.push_str(&format!(" {whose} answers {hidden}."));
    }
    text.push_str(" Without credentials: 401.");
    text
}

/// Which of a field's lists: `read` or `write`.
#[derive(Clone, Copy)]
pub(crate) enum FieldList {
    Read,
    Write,
}

/// A field's `read` or `write` in its schema: a sentence after its description (`lead`
/// who, then what `others` meet), and the rules' words as `x-restgen-read` or
/// `x-restgen-write` for tools.
pub(crate) fn field_access(
    service: &Service,
    r: &Resource,
    schema: &mut Value,
    (key, rules): (FieldList, &[Located<AccessRule>]),
    others: &str,
) {
    let (lead, extension) = match key {
        FieldList::Read => ("Shown only to", "x-restgen-read"),
        FieldList::Write => ("Settable only by", "x-restgen-write"),
    };
    let sentence = format!("{lead} {}; {others}.", field_callers(service, r, rules));
    let text = match schema.get("description").and_then(Value::as_str) {
        Some(d) => format!("{d} {sentence}"),
        None => sentence,
    };
    schema["description"] = json!(text);
    schema[extension] = json!(rules.iter().map(|r| r.value.word()).collect::<Vec<_>>());
}

/// Who a field's rules admit, among the callers the record's own rules admit: `the
/// customer's owner or callers with the `staff` or `admin` role`.
fn field_callers(service: &Service, r: &Resource, rules: &[Located<AccessRule>]) -> String {
    let has = |rule: &AccessRule| rules.iter().any(|r| &r.value == rule);
    if has(&AccessRule::Anyone) {
        return format!("whoever may reach the {}", r.noun());
    }
    let mut who = Vec::new();
    if has(&AccessRule::Authenticated) {
        who.push("any signed-in caller".to_owned());
    } else if has(&AccessRule::Owner) {
        who.push(if r.owner.is_some() { format!("the {}'s owner", r.noun()) } else { "the account itself".to_owned() });
    }
    let roles = service.auth.as_ref().map(|auth| roles(auth, rules)).unwrap_or_default();
    if !roles.is_empty() {
        who.push(with_roles(&roles));
    }
    or(&who)
}

/// The roles named in `rules`, then the admin roles they leave out: both reach every record.
fn roles(auth: &Auth, rules: &[Located<AccessRule>]) -> Vec<String> {
    let mut roles: Vec<String> = rules
        .iter()
        .filter_map(|rule| match &rule.value {
            AccessRule::Role(role) => Some(role.clone()),
            _ => None,
        })
        .collect();
    for admin in &auth.admin_roles {
        if !roles.contains(&admin.value) {
            roles.push(admin.value.clone());
        }
    }
    roles
}

/// `callers with the `staff` role`, `callers with the role `staff` or `admin``.
fn with_roles(roles: &[String]) -> String {
    match roles {
        [one] => format!("callers with the `{one}` role"),
        _ => format!("callers with the role {}", or(&roles.iter().map(|r| format!("`{r}`")).collect::<Vec<_>>())),
    }
}
