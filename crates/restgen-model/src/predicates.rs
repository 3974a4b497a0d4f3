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
}
