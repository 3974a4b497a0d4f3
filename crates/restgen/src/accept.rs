//! Reading `Accept` (RFC 9110 §12.5.1): the weight each member gives, in thousandths. Both
//! the choice of a representation and the choice of a version by media type weigh members
//! this way.

use mediatype::MediaType;

/// The weight of one member of `Accept`: 1 without `q`, `None` when `q` is not a weight.
pub(crate) fn weight_of(m: &MediaType<'_>) -> Option<u16> {
    match m.params.iter().find(|(name, _)| name.as_str().eq_ignore_ascii_case("q")) {
        Some((_, value)) => thousandths(&value.unquoted_str()),
        None => Some(1000),
    }
}

/// A weight (`0`, `0.5`, `1.000`; RFC 9110 §12.4.2) in thousandths.
pub(crate) fn thousandths(text: &str) -> Option<u16> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if fraction.len() > 3 || !fraction.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let digits = format!("{fraction:0<3}");
    match whole {
        "0" => digits.parse().ok(),
        "1" if digits == "000" => Some(1000),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_read_as_rfc_9110_writes_them() {
        for (text, want) in
            [("1", Some(1000)), ("1.0", Some(1000)), ("0.5", Some(500)), ("0", Some(0)), ("0.001", Some(1))]
        {
            assert_eq!(thousandths(text), want, "{text}");
        }
        for bad in ["1.5", "2", "-0", ".5", "0.5000", "0.x", "", "01"] {
            assert_eq!(thousandths(bad), None, "{bad}");
        }
    }
}
