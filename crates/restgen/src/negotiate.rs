//! Content negotiation (RFC 9110 §12.5.1): a read answers in the representation of the
//! resource's `formats` that the request's `Accept` prefers. Each offered type takes the
//! weight of the most specific media range that matches it (`text/csv;charset=utf-8` over
//! `text/csv` over `text/*` over `*/*`); the heaviest above zero wins, the resource's own
//! order (JSON first) breaking ties. Nothing acceptable is a 406 naming what is offered.
//! Errors are never negotiated: they are `application/problem+json` whatever `Accept` says.

use crate::problem::Problem;
use crate::spec::{Format, ResourceSpec};
use crate::version::View;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use mediatype::{MediaType, MediaTypeList};
use restgen_wire::http;

/// What an offered representation is called on the wire.
pub(crate) struct Offer {
    ty: &'static str,
    subtype: &'static str,
    /// Parameters a media range may name and still match (lowercase values).
    params: &'static [(&'static str, &'static str)],
    /// `Content-Type` of the answer.
    pub(crate) content_type: &'static str,
}

/// JSON text is UTF-8 by definition (RFC 8259): a range naming `charset=utf-8` matches it.
const JSON: Offer =
    Offer { ty: "application", subtype: "json", params: &[("charset", "utf-8")], content_type: http::media::JSON };

/// RFC 4180's type, its header row announced (RFC 7111 `header=present`).
const CSV: Offer = Offer {
    ty: "text",
    subtype: "csv",
    params: &[("charset", "utf-8"), ("header", "present")],
    content_type: http::media::CSV,
};

/// Server-Sent Events: a change feed's one representation.
const EVENT_STREAM: Offer =
    Offer { ty: "text", subtype: "event-stream", params: &[], content_type: http::media::EVENT_STREAM };

pub(crate) fn offer(format: Format) -> &'static Offer {
    match format {
        Format::Json => &JSON,
        Format::Csv => &CSV,
    }
}

/// The representation the request asks for among those `spec` offers. In a version named
/// by media type, JSON is also that type (`application/vnd.shop.v2+json`).
pub(crate) fn choose(spec: &ResourceSpec, view: &View, request: &HeaderMap) -> Result<Format, Problem> {
    choose_among(spec.formats, view, request)
}

/// The representation the request asks for among `formats` (JSON first).
pub(crate) fn choose_among(formats: &[Format], view: &View, request: &HeaderMap) -> Result<Format, Problem> {
    let first = formats.first().copied().unwrap_or(Format::Json);
    // What most clients send, answered without parsing: no `Accept`, or `*/*` alone (every
    // format weighs the same, so the first wins).
    let mut sent = request.get_all(header::ACCEPT).iter();
    match (sent.next(), sent.next()) {
        (None, _) => return Ok(first),
        (Some(only), None) if only.as_bytes() == b"*/*" => return Ok(first),
        _ => {}
    }
    let Some(ranges) = ranges(request) else { return Ok(first) };
    let mut best: Option<(Format, u16)> = None;
    let vendor = view.version.map(|v| v.media_type);
    for format in formats {
        let mut q = weight(&ranges, offer(*format));
        if let (Format::Json, Some(media)) = (format, vendor) {
            q = q.max(vendor_weight(&ranges, media));
        }
        if q > 0 && best.is_none_or(|(_, b)| q > b) {
            best = Some((*format, q));
        }
    }
    best.map(|(f, _)| f).ok_or_else(|| not_acceptable(formats))
}

/// 406 unless `Accept` takes an event stream (or says nothing), weighed as every other
/// offer is: `text/event-stream;q=0` refuses it whatever `*/*` says.
pub(crate) fn event_stream(request: &HeaderMap) -> Result<(), Problem> {
    match ranges(request) {
        Some(ranges) if weight(&ranges, &EVENT_STREAM) == 0 => Err(Problem::new(
            StatusCode::NOT_ACCEPTABLE,
            format!("`Accept` admits none of the types this feed offers: {}", EVENT_STREAM.content_type),
        )),
        _ => Ok(()),
    }
}

/// The media ranges of `Accept`, `None` where it says nothing (absent or empty).
fn ranges(request: &HeaderMap) -> Option<Vec<Range>> {
    let lines: Vec<&str> = request.get_all(header::ACCEPT).iter().filter_map(|v| v.to_str().ok()).collect();
    let accept = lines.join(",");
    if accept.trim().is_empty() {
        return None;
    }
    Some(MediaTypeList::new(&accept).filter_map(|m| Range::of(m.ok()?)).collect())
}

/// `Vary: Accept`, which an answer carries wherever `Accept` could have changed it.
pub(crate) fn vary(spec: &ResourceSpec, headers: &mut HeaderMap) {
    if spec.formats.len() > 1 {
        headers.append(header::VARY, HeaderValue::from_static("accept"));
    }
}

/// 406: no representation of the resource is acceptable.
fn not_acceptable(formats: &[Format]) -> Problem {
    let offered: Vec<&str> = formats.iter().map(|f| offer(*f).content_type).collect();
    let p = Problem::new(
        StatusCode::NOT_ACCEPTABLE,
        format!("`Accept` admits none of the types this resource offers: {}", offered.join(", ")),
    );
    if formats.len() > 1 { p.with_header(header::VARY, HeaderValue::from_static("accept")) } else { p }
}

/// One media range of `Accept`: its type and subtype (`*` for any), parameters, and
/// weight in thousandths.
struct Range {
    ty: String,
    subtype: String,
    params: Vec<(String, String)>,
    q: u16,
}

impl Range {
    /// The range, or `None` for a member that names no type or has an unreadable weight
    /// (such a member is passed over, as if it were absent).
    fn of(m: MediaType<'_>) -> Option<Range> {
        let mut params = Vec::new();
        let mut q = 1000;
        for (name, value) in m.params.iter() {
            let (name, value) = (name.as_str().to_ascii_lowercase(), value.unquoted_str().to_ascii_lowercase());
            // Parameters after the weight are extensions of the weight, not of the type.
            if name == "q" {
                q = crate::accept::thousandths(&value)?;
                break;
            }
            params.push((name, value));
        }
        let subtype = match &m.suffix {
            Some(suffix) => format!("{}+{}", m.subty.as_str(), suffix.as_str()),
            None => m.subty.as_str().to_owned(),
        };
        Some(Range { ty: m.ty.as_str().to_ascii_lowercase(), subtype: subtype.to_ascii_lowercase(), params, q })
    }

    /// How specifically the range names `offer`: `None` when it does not match it.
    fn specificity(&self, offer: &Offer) -> Option<u8> {
        if self.ty == "*" {
            return (self.subtype == "*" && self.params.is_empty()).then_some(0);
        }
        if self.ty != offer.ty {
            return None;
        }
        if self.subtype == "*" {
            return self.params.is_empty().then_some(1);
        }
        if self.subtype != offer.subtype {
            return None;
        }
        let all_held = self.params.iter().all(|(n, v)| offer.params.iter().any(|(on, ov)| on == n && ov == v));
        all_held.then_some(if self.params.is_empty() { 2 } else { 3 })
    }
}

/// The weight `Accept` gives `offer`: that of the most specific range naming it (the
/// heaviest of equally specific ones), 0 when none does.
fn weight(ranges: &[Range], offer: &Offer) -> u16 {
    let mut best: Option<(u8, u16)> = None;
    for r in ranges {
        if let Some(s) = r.specificity(offer) {
            best = match best {
                Some((bs, bq)) if bs > s || (bs == s && bq >= r.q) => Some((bs, bq)),
                _ => Some((s, r.q)),
            };
        }
    }
    best.map_or(0, |(_, q)| q)
}

/// The weight `Accept` gives a version's own media type, named exactly.
fn vendor_weight(ranges: &[Range], media: &str) -> u16 {
    let Some((ty, subtype)) = media.split_once('/') else { return 0 };
    ranges.iter().filter(|r| r.ty == ty && r.subtype == subtype && r.params.is_empty()).map(|r| r.q).max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    static BOTH: ResourceSpec = ResourceSpec { formats: &[Format::Json, Format::Csv], ..ResourceSpec::DEFAULT };
    static JSON_ONLY: ResourceSpec = ResourceSpec::DEFAULT;

    fn chosen(spec: &ResourceSpec, accept: &[&'static str]) -> Option<Format> {
        let mut h = HeaderMap::new();
        for a in accept {
            h.append(header::ACCEPT, HeaderValue::from_static(a));
        }
        choose(spec, &View::NONE, &h).ok()
    }

    #[test]
    fn the_preferred_acceptable_type_wins_and_ties_go_to_json() {
        use Format::*;
        for (accept, want) in [
            (&[][..], Some(Json)),
            (&[""], Some(Json)),
            (&["*/*"], Some(Json)),
            (&["text/csv"], Some(Csv)),
            (&["TEXT/CSV"], Some(Csv)),
            (&["text/*"], Some(Csv)),
            (&["application/json;q=0.5, text/csv"], Some(Csv)),
            (&["application/json, text/csv;q=0.9"], Some(Json)),
            (&["text/csv;q=0.2, */*;q=0.1"], Some(Csv)),
            (&["*/*;q=0.5, application/json;q=0"], Some(Csv)),
            (&["text/csv; charset=UTF-8"], Some(Csv)),
            (&["text/csv;header=present;q=0.9", "application/json;q=0.1"], Some(Csv)),
            (&["application/json; charset=utf-8"], Some(Json)),
            (&["text/html, application/xhtml+xml, */*;q=0.8"], Some(Json)),
            (&["text/html"], None),
            (&["text/csv; charset=latin1"], None),
            (&["application/json;q=0, text/csv;q=0"], None),
            (&["text/*;q=0, application/*;q=0"], None),
            (&["nonsense"], None),
            (&["application/json;q=2"], None),
            (&["text/csv;q=0.1234"], None),
            (&["nonsense, text/csv"], Some(Csv)),
        ] {
            assert_eq!(chosen(&BOTH, accept), want, "Accept: {accept:?}");
        }
        assert_eq!(chosen(&JSON_ONLY, &["text/csv"]), None);
        assert_eq!(chosen(&JSON_ONLY, &["text/csv, */*;q=0.1"]), Some(Json));
    }

    #[test]
    fn a_refusal_names_what_is_offered_and_varies_by_accept() {
        let mut h = HeaderMap::new();
        h.insert(header::ACCEPT, HeaderValue::from_static("image/png"));
        let p = choose(&BOTH, &View::NONE, &h).expect_err("406");
        assert_eq!(p.status, StatusCode::NOT_ACCEPTABLE);
        assert!(p.detail.contains("application/json, text/csv"), "{}", p.detail);
        assert!(p.headers.iter().any(|(n, v)| n == header::VARY && v == "accept"));
    }

    #[test]
    fn a_feed_is_taken_by_what_weighs_an_event_stream_above_zero() {
        for (accept, takes) in [
            (&[][..], true),
            (&[""], true),
            (&["text/event-stream"], true),
            (&["TEXT/Event-Stream; q=0.5"], true),
            (&["text/*"], true),
            (&["*/*"], true),
            (&["application/json, */*;q=0.1"], true),
            (&["application/json"], false),
            (&["text/event-stream;q=0"], false),
            (&["text/event-stream;q=0, */*"], false),
            (&["text/*;q=0"], false),
            (&["nonsense"], false),
        ] {
            let mut h = HeaderMap::new();
            for a in accept {
                h.append(header::ACCEPT, HeaderValue::from_static(a));
            }
            let refusal = event_stream(&h).err();
            assert_eq!(refusal.is_none(), takes, "Accept: {accept:?}");
            if let Some(p) = refusal {
                assert_eq!(p.status, StatusCode::NOT_ACCEPTABLE);
                assert!(p.detail.contains("text/event-stream"), "{}", p.detail);
            }
        }
    }
}
