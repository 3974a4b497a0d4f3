//! What a well-formed value of the format looks like, said once: the checks hold a schema
//! to these, and the runtime and the OpenAPI document to the same.

/// `SHOP_JWT_SECRET`: letters, digits and `_`, not starting with a digit.
pub fn is_env_name(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `X-API-Key`: an HTTP header name of letters, digits and `-` (the tokens a header name
/// may hold that every proxy passes through).
pub fn is_header_name(text: &str) -> bool {
    !text.is_empty() && text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// `data`, `results`: a JSON key a client can name in any language without quoting.
pub fn is_plain_key(text: &str) -> bool {
    text.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// An e-mail address as the service takes one: a local part of 1 to 64 characters, an `@`,
/// and a domain of dot-separated labels (1 to 63 characters of letters, digits and `-`,
/// none starting or ending the domain with `.` or `-`), no white space anywhere.
pub fn is_email(s: &str) -> bool {
    match s.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && local.len() <= 64
                && domain.contains('.')
                && !domain.starts_with(['.', '-'])
                && !domain.ends_with(['.', '-'])
                && domain.chars().all(|c| c.is_alphanumeric() || c == '.' || c == '-')
                // DNS labels are 1 to 63 octets (RFC 1035).
                && domain.split('.').all(|label| !label.is_empty() && label.len() <= 63)
                && !s.chars().any(char::is_whitespace)
        }
        None => false,
    }
}

/// An `http` or `https` URL with a host, no white space.
pub fn is_url(s: &str) -> bool {
    let rest = s.strip_prefix("https://").or_else(|| s.strip_prefix("http://"));
    rest.is_some_and(|r| !r.is_empty() && !r.starts_with('/') && !r.chars().any(char::is_whitespace))
}

/// `0190b6a4-0000-7000-8000-000000000001`: five groups of hex digits.
pub fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.len() == 5
        && groups.iter().zip([8, 4, 4, 4, 12]).all(|(g, n)| g.len() == n && g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// `-12.50`: digits, an optional sign and an optional fraction (as the OpenAPI document's
/// pattern for decimals says).
pub fn is_decimal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (whole, frac) = digits.split_once('.').map_or((digits, None), |(w, f)| (w, Some(f)));
    !whole.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.is_none_or(|f| !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()))
}

/// `2026-11-25`: a calendar date, YYYY-MM-DD with every digit written (chrono alone also
/// reads `2026-1-5`).
pub fn is_date(s: &str) -> bool {
    s.len() == crate::bounds::DATE_CHARS && chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// `2026-11-25T10:00:00Z`: an RFC 3339 datetime.
pub fn is_datetime(s: &str) -> bool {
    chrono::DateTime::parse_from_rfc3339(s).is_ok()
}

/// `10.0.0.1`, `10.0.0.0/8`, `::1`, `fd00::/8`: an address or a CIDR range.
pub fn is_ip_or_cidr(text: &str) -> bool {
    let (addr, prefix) = text.split_once('/').map_or((text, None), |(a, b)| (a, Some(b)));
    match addr.parse::<std::net::IpAddr>() {
        Ok(ip) => prefix.is_none_or(|bits| bits.parse::<u8>().is_ok_and(|b| b <= if ip.is_ipv4() { 32 } else { 128 })),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_keys_and_ranges() {
        assert!(is_env_name("SHOP_JWT_SECRET") && is_env_name("_X") && !is_env_name("1X") && !is_env_name("A-B"));
        assert!(is_header_name("X-API-Key") && !is_header_name("") && !is_header_name("X API"));
        assert!(is_plain_key("data") && is_plain_key("_rows2") && !is_plain_key("a-b") && !is_plain_key("2a"));
        assert!(is_ip_or_cidr("10.0.0.0/8") && is_ip_or_cidr("::1") && is_ip_or_cidr("fd00::/8"));
        assert!(!is_ip_or_cidr("10.0.0.0/33") && !is_ip_or_cidr("example.com") && !is_ip_or_cidr("::/129"));
    }

    #[test]
    fn values_of_the_field_types() {
        assert!(is_email("a@b.co"));
        assert!(!is_email(&format!("a@{}.co", "x".repeat(64))));
        assert!(!is_email("a@b..co") && !is_email("a@b") && !is_email("@b.co") && !is_email("a b@c.de"));
        assert!(is_url("https://x.io/p") && !is_url("ftp://x.io") && !is_url("https://"));
        assert!(is_uuid("0190b6a4-0000-7000-8000-000000000001") && !is_uuid("0190b6a4-0000-7000-8000"));
        assert!(
            is_decimal("-12.50") && is_decimal("3") && !is_decimal("1e5") && !is_decimal("1.") && !is_decimal("NaN")
        );
        assert!(is_date("2024-02-29") && !is_date("2023-02-29") && !is_date("2024-2-3"));
        assert!(is_datetime("2026-11-25T10:00:00Z") && !is_datetime("2026-11-25 10:00"));
    }
}
