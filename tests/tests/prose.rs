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
