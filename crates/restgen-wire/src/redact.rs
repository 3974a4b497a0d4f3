//! What `Debug` shows in place of a secret (a token, a key, a password, a webhook secret,
//! a database URL's password), on both sides of the wire: `***`. A value printed for
//! debugging ends up in logs, panics and bug reports, where a secret must never be.

use std::fmt;

/// Shown for a secret.
pub const REDACTED: &str = "***";

/// A secret's stand-in for `Debug`: `.field("token", &Redacted)` prints `token: ***`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(REDACTED)
    }
}

/// `url` with the password of its user part (`scheme://user:password@host`) replaced by
/// `***`, and every query parameter named like a secret (`password`, `sslpassword`,
/// `token`, `secret`, `key`) too: a database URL as it may be logged.
pub fn url(url: &str) -> String {
    let (head, query) = url.split_once('?').map_or((url, None), |(h, q)| (h, Some(q)));
    let mut out = match head.split_once("://") {
        Some((scheme, rest)) => {
            // The user part ends at the last `@` before the path.
            let authority_end = rest.find('/').unwrap_or(rest.len());
            match rest[..authority_end].rfind('@') {
                Some(at) => {
                    let user = &rest[..at];
                    let user = user.split_once(':').map_or(user, |(name, _)| name);
                    let hidden = if rest[..at].contains(':') { format!("{user}:{REDACTED}") } else { user.to_owned() };
                    format!("{scheme}://{hidden}{}", &rest[at..])
                }
                None => head.to_owned(),
            }
        }
        None => head.to_owned(),
    };
    if let Some(query) = query {
        let pairs: Vec<String> = query
            .split('&')
            .map(|pair| match pair.split_once('=') {
                Some((name, _)) if secret_name(name) => format!("{name}={REDACTED}"),
                _ => pair.to_owned(),
            })
            .collect();
        out.push('?');
        out.push_str(&pairs.join("&"));
    }
    out
}

fn secret_name(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["password", "token", "secret", "key"].iter().any(|word| name.contains(word))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_urls_password_and_secret_parameters_are_hidden_and_the_rest_kept() {
        for (given, shown) in [
            ("postgres://app:s3cret@db:5432/shop", "postgres://app:***@db:5432/shop"),
            ("postgres://app:p@ss@word@db/shop", "postgres://app:***@db/shop"),
            ("postgres://app@db/shop?sslmode=require", "postgres://app@db/shop?sslmode=require"),
            ("postgres://db/shop?user=app&password=s3cret", "postgres://db/shop?user=app&password=***"),
            (
                "postgres://a:b@db/s?sslpassword=x&application_name=y",
                "postgres://a:***@db/s?sslpassword=***&application_name=y",
            ),
            ("sqlite://shop.db?mode=rwc", "sqlite://shop.db?mode=rwc"),
            ("sqlite://data/a@b.db", "sqlite://data/a@b.db"),
        ] {
            assert_eq!(super::url(given), shown, "{given}");
        }
    }
}
