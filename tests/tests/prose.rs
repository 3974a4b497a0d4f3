//! Descriptions in correct English: every indefinite article in every generated document
//! and doc comment is the one its next word is said with ("an order", "a user"), checked
//! for every valid fixture, whatever its resources are named.

use restgen_core::words::article;
use restgen_tests::{display_name, generate, generate_client, valid_schemas};

/// Each `a`/`an` of `text` whose next word takes the other article, with that word.
fn misused(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    words
        .windows(2)
        .filter_map(|pair| {
            let said = pair[0].to_ascii_lowercase();
            if said != "a" && said != "an" {
                return None;
            }
            let next = pair[1].trim_start_matches(['`', '"', '(', '\'', '*']);
            let noun: String =
                next.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-').collect();
            (!noun.is_empty() && article(&noun) != said).then(|| format!("{} {}", pair[0], pair[1]))
        })
        .collect()
}

#[test]
fn every_article_of_every_generated_description_agrees_with_its_noun() {
    let mut read = 0;
    for path in valid_schemas() {
        let name = display_name(&path);
        let files = generate(&path).files.into_iter().chain(generate_client(&path).files);
        for (file, contents) in files {
            let text = &contents.contents;
            let found = misused(text);
            assert!(found.is_empty(), "{name}: {}: {found:?}", file.display());
            read += text.len();
        }
    }
    assert!(read > 100_000, "the documents and code were read: {read} bytes");
}

#[test]
fn the_check_itself_finds_a_wrong_article() {
    assert_eq!(
        misused("Create a order, then an user; a `invoice` and an hour."),
        ["a order,", "an user;", "a `invoice`"]
    );
}

/// Who may call each resource operation, as its description says it, against its rules,
/// for every resource of every fixture: `owner` reads as the caller's own records on a list,
/// as the new record being theirs on a create, and as the record's owner on one record; a
/// role the rules name is named; an open operation says so; every guarded one names 401.
#[test]
fn every_operation_says_who_may_call_it_as_its_rules_do() {
    use restgen_core::model::{AccessRule, Operation};
    let mut checked = 0;
    for path in valid_schemas() {
        let service = restgen_tests::load_valid(&path);
        let Some(auth) = &service.auth else { continue };
        let files = generate(&path).files;
        let document: serde_json::Value =
            serde_json::from_str(&files[std::path::Path::new("openapi.json")].contents).unwrap();
        for r in &service.resources {
            let base = &service.api.base_path.value;
            let collection = format!("{base}{}", r.path.value);
            let item = format!("{collection}/{{{}}}", r.id_param());
            let cases = [
                (Operation::Create, &collection, "post", &r.access.create),
                (Operation::List, &collection, "get", &r.access.read),
                (Operation::Get, &item, "get", &r.access.read),
                (Operation::Delete, &item, "delete", &r.access.delete),
            ];
            for (operation, route, method, rules) in cases {
                if !r.has(operation) {
                    continue;
                }
                let said = document["paths"][route.as_str()][method]["description"].as_str().unwrap_or_else(|| {
                    panic!("{}: {method} {route} has no description", display_name(&path));
                });
                let has = |rule: &AccessRule| rules.iter().any(|x| &x.value == rule);
                let what = format!("{}: {method} {route}: {said}", display_name(&path));
                if has(&AccessRule::Anyone) {
                    assert_eq!(said, "Open to anyone, signed in or not.", "{what}");
                    continue;
                }
                assert!(said.ends_with("Without credentials: 401."), "{what}");
                if has(&AccessRule::Owner) && !has(&AccessRule::Authenticated) {
                    let owner = match operation {
                        Operation::List => "who sees only their own",
                        Operation::Create if r.owner.is_some() => "is theirs",
                        Operation::Create => "any signed-in caller",
                        _ if r.owner.is_some() => "owner",
                        _ => "the account itself",
                    };
                    assert!(said.contains(owner), "{what}: `{owner}`");
                }
                let named = rules.iter().filter_map(|x| match &x.value {
                    AccessRule::Role(role) => Some(role.clone()),
                    _ => None,
                });
                let admins = auth.admin_roles.iter().map(|a| a.value.clone());
                let owned_create = operation == Operation::Create && has(&AccessRule::Owner);
                if !has(&AccessRule::Authenticated) && !owned_create {
                    for role in named.chain(admins) {
                        assert!(said.contains(&format!("`{role}`")), "{what}: the role `{role}`");
                    }
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 30, "{checked} operations checked");
}
