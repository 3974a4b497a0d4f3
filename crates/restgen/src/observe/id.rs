//! Request ids: taken from a trusted proxy's `X-Request-Id`, made here otherwise.
//!
//! A made id is 24 hex digits: 8 drawn once for the process, so that two instances do
//! not hand out the same ids, then 16 that hash the process's count of requests under a
//! key drawn at start. The count itself would tell any caller how many requests the
//! service serves between two of theirs; the hash hides it at the cost of one SipHash and no
//! system call.

use crate::rate::address::Proxies;
use axum::extract::ConnectInfo;
use axum::http::{HeaderMap, HeaderValue};
use std::hash::{BuildHasher, RandomState};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};

use restgen_model::bounds::MAX_REQUEST_ID as MAX_LEN;

/// Where ids come from: the proxies whose id is taken, and what makes the others.
pub(crate) struct Ids {
    proxies: Proxies,
    prefix: u32,
    key: RandomState,
    count: AtomicU64,
}

impl Ids {
    pub fn new(proxies: Proxies) -> Ids {
        let mut prefix = [0u8; 4];
        getrandom::fill(&mut prefix).expect("the operating system's random generator works");
        Ids { proxies, prefix: u32::from_ne_bytes(prefix), key: RandomState::new(), count: AtomicU64::new(0) }
    }

    /// The request's id: the one its trusted proxy sent, when it is one a log can carry,
    /// or a new one. Anybody else's is ignored, or a caller could make its requests look
    /// like another's in the log.
    /// Sent twice, neither is taken: a proxy that adds its own beside the client's would
    /// otherwise leave the client's first.
    pub fn of(&self, headers: &HeaderMap, peer: Option<&ConnectInfo<SocketAddr>>) -> HeaderValue {
        let mut sent = headers.get_all(restgen_wire::http::REQUEST_ID.lowercase).iter();
        let sent = match (sent.next(), sent.next()) {
            (Some(id), None) if usable(id.as_bytes()) => Some(id),
            _ => None,
        };
        match sent {
            Some(id) if peer.is_some_and(|ConnectInfo(peer)| self.proxies.trusts(peer.ip().to_canonical())) => {
                id.clone()
            }
            _ => self.make(),
        }
    }

    fn make(&self) -> HeaderValue {
        let n = self.count.fetch_add(1, Ordering::Relaxed);
        let text = format!("{:08x}{:016x}", self.prefix, self.key.hash_one(n));
        HeaderValue::try_from(text).expect("hex digits are a header value")
    }
}

/// Whether a proxy's id can be taken as it is: 1 to [`MAX_LEN`] printable ASCII
/// characters, no space, quote or backslash, so that it is one token in a text log line
/// and quoted the same in any other.
fn usable(id: &[u8]) -> bool {
    (1..=MAX_LEN).contains(&id.len()) && id.iter().all(|b| b.is_ascii_graphic() && !matches!(b, b'"' | b'\\'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::ProxyHeader;
    use std::collections::HashSet;

    fn ids() -> Ids {
        Ids::new(Proxies::parse(&["10.0.0.0/8"], ProxyHeader::XForwardedFor).unwrap())
    }

    fn sent(id: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(restgen_wire::http::REQUEST_ID.lowercase, HeaderValue::from_str(id).unwrap());
        headers
    }

    fn peer(ip: &str) -> ConnectInfo<SocketAddr> {
        ConnectInfo(SocketAddr::new(ip.parse().unwrap(), 40000))
    }

    #[test]
    fn made_ids_are_distinct_fixed_width_hex_and_do_not_count_up() {
        let ids = ids();
        let made: Vec<String> =
            (0..10_000).map(|_| ids.of(&HeaderMap::new(), None).to_str().unwrap().to_owned()).collect();
        assert!(made.iter().all(|id| id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())), "{made:?}");
        assert_eq!(made.iter().collect::<HashSet<_>>().len(), made.len(), "no id twice");
        // One process's ids share their first 8 digits; what follows is no count.
        assert!(made.iter().all(|id| id[..8] == made[0][..8]));
        let tails: Vec<u64> = made.iter().map(|id| u64::from_str_radix(&id[8..], 16).unwrap()).collect();
        assert!(tails.windows(2).filter(|w| w[1] == w[0] + 1).count() < 2, "ids count up: {:?}", &made[..4]);
        assert_ne!(ids.make().to_str().unwrap()[..8], Ids::new(Proxies::default()).make().to_str().unwrap()[..8]);
    }

    /// The rule the OpenAPI document states as a pattern is the one applied here.
    #[test]
    fn the_documented_pattern_admits_the_ids_taken_and_no_other() {
        let pattern = regex::Regex::new(restgen_model::bounds::REQUEST_ID_PATTERN).unwrap();
        for b in 0u8..=127 {
            let one = [b];
            let text = std::str::from_utf8(&one).unwrap();
            assert_eq!(pattern.is_match(text), usable(&one), "byte {b:#04x}");
        }
    }

    #[test]
    fn a_trusted_proxys_id_is_taken_and_anybody_elses_is_not() {
        let ids = ids();
        let id = "6f1c2a1e-9c1d-4b7e-8a51-0e2c6d2b4f10";
        assert_eq!(ids.of(&sent(id), Some(&peer("10.1.2.3"))), id);
        assert_eq!(ids.of(&sent(id), Some(&peer("::ffff:10.1.2.3"))), id, "an IPv4 peer on an IPv6 socket");
        for untrusted in [Some(peer("192.0.2.7")), None] {
            assert_ne!(ids.of(&sent(id), untrusted.as_ref()), id);
        }
    }

    #[test]
    fn a_proxys_id_a_log_line_cannot_carry_as_one_token_is_replaced() {
        let ids = ids();
        let long = "a".repeat(MAX_LEN + 1);
        for bad in ["", "two words", "quote\"d", "back\\slash", "tab\there", long.as_str(), "é"] {
            let mut headers = HeaderMap::new();
            headers.insert(restgen_wire::http::REQUEST_ID.lowercase, HeaderValue::from_bytes(bad.as_bytes()).unwrap());
            let id = ids.of(&headers, Some(&peer("10.0.0.1")));
            assert_eq!(id.len(), 24, "{bad:?} replaced by a made id");
        }
        assert_eq!(ids.of(&sent(&"a".repeat(MAX_LEN)), Some(&peer("10.0.0.1"))).len(), MAX_LEN);
        let mut twice = sent("from-the-client");
        twice.append(restgen_wire::http::REQUEST_ID.lowercase, HeaderValue::from_static("from-the-proxy"));
        assert_eq!(ids.of(&twice, Some(&peer("10.0.0.1"))).len(), 24, "neither of two is taken");
    }
}
