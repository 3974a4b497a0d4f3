//! E-mail addresses in one canonical form, so that `Ann@EXAMPLE.com` and `ann@example.com`
//! are one account and one unique value, and the database's unique index enforces it: the
//! domain in IDNA ASCII form (UTS 46: lower case, `bücher.de` as `xn--bcher-kva.de`), the
//! local part Unicode-normalised (NFC) and lower-cased. Every `email` field is stored so,
//! and looked up (a login, a filter) so.
//!
//! RFC 5321 lets a host tell local parts apart by case; no mail provider in use does, and
//! one person's two spellings of an address must not be two accounts.

use unicode_normalization::UnicodeNormalization;

/// `address` in canonical form; `None` when its domain is not a valid domain name.
pub fn canonical(address: &str) -> Option<String> {
    let (local, domain) = address.rsplit_once('@')?;
    if local.is_empty() {
        return None;
    }
    let domain = idna::domain_to_ascii_strict(domain).ok().filter(|d| !d.is_empty())?;
    let local: String = local.nfc().collect::<String>().to_lowercase().nfc().collect();
    Some(format!("{local}@{domain}"))
}

#[cfg(test)]
mod tests {
    use super::canonical;

    #[test]
    fn one_address_has_one_form_whatever_its_case_normalisation_and_domain_script() {
        for (given, expected) in [
            ("ann@example.com", "ann@example.com"),
            ("Ann@EXAMPLE.com", "ann@example.com"),
            ("ANN@Example.COM", "ann@example.com"),
            ("ann.lee+shop@example.com", "ann.lee+shop@example.com"),
            ("jürgen@bücher.de", "jürgen@xn--bcher-kva.de"),
            ("JÜRGEN@BÜCHER.DE", "jürgen@xn--bcher-kva.de"),
            // `ü` as `u` and a combining diaeresis: the same letter once normalised.
            ("ju\u{308}rgen@bu\u{308}cher.de", "jürgen@xn--bcher-kva.de"),
            ("x@xn--bcher-kva.de", "x@xn--bcher-kva.de"),
            ("\"a@b\"@example.com", "\"a@b\"@example.com"),
            // UTS 46 mapping: full-width letters are the ASCII ones.
            ("ann@\u{FF25}\u{FF38}AMPLE.com", "ann@example.com"),
        ] {
            assert_eq!(canonical(given).as_deref(), Some(expected), "{given}");
        }
        // The rest of UTS 46 (the Unicode tables `idna_adapter` picks): a label may not start
        // with a combining mark, a zero-width joiner needs a virama before it, and a
        // right-to-left label may not hold a left-to-right letter.
        for bad in [
            "no-at-sign",
            "@example.com",
            "ann@",
            "ann@exa mple.com",
            "ann@\u{308}bucher.de",
            "ann@a\u{200D}b.de",
            "ann@\u{5D0}a.com",
        ] {
            assert_eq!(canonical(bad), None, "{bad}");
        }
    }
}
