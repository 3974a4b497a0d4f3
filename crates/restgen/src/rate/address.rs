//! The address a request came from: the peer of the connection, or, when that peer is a
//! proxy the schema trusts (`trusted_proxies`), the client it names in the one forwarding
//! header those proxies write (`proxy_header`: `X-Forwarded-For`, or `Forwarded` as RFC
//! 7239 has it). The other header is never read: a proxy that appends to one passes the
//! other through as the client wrote it, so reading it would let any caller pick the
//! budget it is counted against.

use crate::spec::ProxyHeader;
use axum::http::HeaderMap;
use ipnet::IpNet;
use std::net::{IpAddr, Ipv6Addr};

/// The proxies whose forwarding header is believed, and which header that is.
#[derive(Clone, Debug, Default)]
pub(crate) struct Proxies {
    trusted: Vec<IpNet>,
    header: ProxyHeader,
}

impl Proxies {
    /// Addresses (`10.0.0.1`) and CIDR ranges (`10.0.0.0/8`), as the schema checker
    /// accepted them, and the header they write.
    pub fn parse(entries: &[&str], header: ProxyHeader) -> Result<Proxies, String> {
        let trusted = entries
            .iter()
            .map(|e| {
                e.parse::<IpNet>()
                    .or_else(|_| e.parse::<IpAddr>().map(IpNet::from))
                    .map_err(|_| format!("trusted proxy `{e}` is not an address or CIDR range"))
            })
            .collect::<Result<_, _>>()?;
        Ok(Proxies { trusted, header })
    }

    pub fn trusts(&self, ip: IpAddr) -> bool {
        self.trusted.iter().any(|net| net.contains(&ip))
    }

    /// The client's address: walking the forwarding header from its right end (the hop
    /// nearest this service), the first address that is not a trusted proxy. A hop that
    /// names no usable address (`unknown`, an obfuscated name, garbage) ends the walk at
    /// the last trusted hop.
    pub fn client(&self, peer: IpAddr, headers: &HeaderMap) -> IpAddr {
        let peer = peer.to_canonical();
        if !self.trusts(peer) {
            return peer;
        }
        let hops = match self.header {
            ProxyHeader::Forwarded => forwarded_for(headers),
            ProxyHeader::XForwardedFor => x_forwarded_for(headers),
        };
        let mut client = peer;
        for hop in hops.iter().rev() {
            match hop {
                Some(ip) => {
                    client = ip.to_canonical();
                    if !self.trusts(client) {
                        break;
                    }
                }
                None => break,
            }
        }
        client
    }
}

/// The `for=` of every `Forwarded` element, in order; `None` for one that names no
/// address.
fn forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    let mut hops = Vec::new();
    for value in headers.get_all("forwarded") {
        let Ok(text) = value.to_str() else {
            hops.push(None);
            continue;
        };
        for element in text.split(',') {
            let node = element.split(';').find_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                name.trim().eq_ignore_ascii_case("for").then(|| value.trim())
            });
            if let Some(node) = node {
                hops.push(node_address(node.trim_matches('"')));
            }
        }
    }
    hops
}

/// RFC 7239's node: `192.0.2.43`, `192.0.2.43:47011`, `[2001:db8::17]`, `[2001:db8::17]:4711`.
fn node_address(node: &str) -> Option<IpAddr> {
    if let Some(rest) = node.strip_prefix('[') {
        let (v6, _) = rest.split_once(']')?;
        return v6.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let host = node.split_once(':').map_or(node, |(h, _)| h);
    host.parse().ok()
}

fn x_forwarded_for(headers: &HeaderMap) -> Vec<Option<IpAddr>> {
    headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("?").split(',').map(|a| a.trim().parse().ok()).collect::<Vec<_>>())
        .collect()
}

/// The budget key of an address. An IPv6 client usually holds a whole /64, so its
/// addresses share one budget; changing the last 64 bits does not buy a new one.
pub(crate) fn key(ip: IpAddr) -> String {
    match ip.to_canonical() {
        IpAddr::V4(v4) => format!("ip:{v4}"),
        IpAddr::V6(v6) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            format!("ip:{}/64", Ipv6Addr::from(prefix))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.append(*name, HeaderValue::from_static(value));
        }
        h
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    fn proxies(trusted: &[&str]) -> Proxies {
        Proxies::parse(trusted, ProxyHeader::XForwardedFor).unwrap()
    }

    fn forwarded(trusted: &[&str]) -> Proxies {
        Proxies::parse(trusted, ProxyHeader::Forwarded).unwrap()
    }

    #[test]
    fn forwarding_headers_from_anybody_else_are_ignored() {
        let h = headers(&[("x-forwarded-for", "203.0.113.9"), ("forwarded", "for=198.51.100.1")]);
        assert_eq!(proxies(&["10.0.0.0/8"]).client(ip("192.0.2.1"), &h), ip("192.0.2.1"));
        assert_eq!(forwarded(&["10.0.0.0/8"]).client(ip("192.0.2.1"), &h), ip("192.0.2.1"));
    }

    #[test]
    fn the_first_untrusted_hop_from_the_right_is_the_client() {
        // The client wrote a forged first entry; the proxies appended the truth.
        let h = headers(&[("x-forwarded-for", "1.2.3.4, 203.0.113.9, 10.1.1.1")]);
        assert_eq!(proxies(&["10.0.0.0/8", "127.0.0.1"]).client(ip("127.0.0.1"), &h), ip("203.0.113.9"));
        let h = headers(&[("forwarded", "for=1.2.3.4, for=\"[2001:db8::17]:4711\";proto=https, for=10.0.0.5")]);
        assert_eq!(forwarded(&["10.0.0.0/8"]).client(ip("10.0.0.2"), &h), ip("2001:db8::17"));
        // Split over several lines, in order.
        let h = headers(&[("x-forwarded-for", "203.0.113.9"), ("x-forwarded-for", "10.2.2.2")]);
        assert_eq!(proxies(&["10.0.0.0/8"]).client(ip("10.0.0.2"), &h), ip("203.0.113.9"));
    }

    /// A proxy that appends to one header passes the other through as the client wrote it:
    /// only the declared one is read, whichever it is, and the other never.
    #[test]
    fn only_the_declared_header_is_read_and_the_other_never() {
        let h = headers(&[("forwarded", "for=192.0.2.60:8080"), ("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(proxies(&["10.0.0.0/8"]).client(ip("10.0.0.1"), &h), ip("203.0.113.9"));
        assert_eq!(forwarded(&["10.0.0.0/8"]).client(ip("10.0.0.1"), &h), ip("192.0.2.60"));
        // The client's own header of the other kind, the proxy's header absent: the proxy.
        let h = headers(&[("forwarded", "for=192.0.2.60")]);
        assert_eq!(proxies(&["10.0.0.0/8"]).client(ip("10.0.0.1"), &h), ip("10.0.0.1"));
        let h = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(forwarded(&["10.0.0.0/8"]).client(ip("10.0.0.1"), &h), ip("10.0.0.1"));
    }

    #[test]
    fn an_unknown_hop_ends_the_walk() {
        let h = headers(&[("forwarded", "for=192.0.2.60, for=unknown, for=10.3.3.3")]);
        assert_eq!(forwarded(&["10.0.0.0/8"]).client(ip("10.0.0.1"), &h), ip("10.3.3.3"), "the last address known");
        let h = headers(&[("x-forwarded-for", "192.0.2.60, garbage, 10.3.3.3")]);
        assert_eq!(proxies(&["10.0.0.0/8"]).client(ip("10.0.0.1"), &h), ip("10.3.3.3"));
        assert_eq!(proxies(&["10.0.0.0/8"]).client(ip("10.0.0.1"), &HeaderMap::new()), ip("10.0.0.1"), "no header");
    }

    #[test]
    fn ipv6_clients_share_a_budget_per_64_and_mapped_ipv4_is_ipv4() {
        assert_eq!(key(ip("2001:db8:1:2:aaaa::1")), key(ip("2001:db8:1:2:bbbb::2")));
        assert_ne!(key(ip("2001:db8:1:2::1")), key(ip("2001:db8:1:3::1")));
        assert_eq!(key(ip("2001:db8:1:2::1")), "ip:2001:db8:1:2::/64");
        assert_eq!(key(ip("::ffff:192.0.2.1")), key(ip("192.0.2.1")));
        let h = headers(&[("x-forwarded-for", "203.0.113.9")]);
        assert_eq!(proxies(&["127.0.0.1"]).client(ip("::ffff:127.0.0.1"), &h), ip("203.0.113.9"));
    }
}
