//! Where a webhook may be sent. A subscriber names a URL; the service then connects to it
//! from inside its own network, so a URL that leads to the service's neighbours (a
//! database port, a cloud metadata endpoint, an admin console on loopback) would let any
//! subscriber reach them (server-side request forgery). So: https only (plain http where
//! the deployment allows it), no credentials in the URL, and the addresses it resolves to
//! must be public; checked when the subscription is made and again, after resolving the
//! name anew, at every delivery, on the very addresses the connection then uses (a name
//! that resolved to a public address once and to a private one later gains nothing).
//! With `allow_loopback` (tests, local development) loopback is the only admitted range:
//! such a service never sends anything off its machine.

use super::Resolver;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

/// The longest URL a subscription takes.
pub const MAX_URL: usize = restgen_model::bounds::MAX_WEBHOOK_URL;

/// What the deployment admits (`<SERVICE>_WEBHOOK_ALLOW_HTTP`, `_ALLOW_LOOPBACK`).
#[derive(Clone, Debug)]
pub struct Policy {
    pub allow_http: bool,
    pub allow_loopback: bool,
    pub resolver: Arc<dyn Resolver>,
}

impl Policy {
    /// Whether a connection to `ip` is admitted.
    pub fn admits(&self, ip: IpAddr) -> bool {
        self.refusal(ip).is_none()
    }

    /// Why a connection to `ip` is refused, as the kind of address it is (never the
    /// address: a subscriber who names a host must not learn what it resolves to inside
    /// the service's network); `None` where it is admitted.
    fn refusal(&self, ip: IpAddr) -> Option<String> {
        match class(ip) {
            Class::Loopback if self.allow_loopback => None,
            Class::Loopback => Some("a loopback address".into()),
            Class::Public if self.allow_loopback => {
                Some("an address off this machine, and this deployment admits loopback targets only".into())
            }
            Class::Public => None,
            Class::Refused(kind) => Some(format!("{} address", restgen_model::words::a(kind))),
        }
    }

    /// Checks a subscription's URL: its form, then every address its host resolves to now.
    pub async fn check(&self, text: &str) -> Result<reqwest::Url, String> {
        let url = self.form(text)?;
        let host = url.host_str().ok_or("names no host")?.trim_start_matches('[').trim_end_matches(']');
        self.addresses(host).await?;
        Ok(url)
    }

    /// The URL's form: absolute, https (or admitted http), no credentials, a host.
    pub fn form(&self, text: &str) -> Result<reqwest::Url, String> {
        if text.len() > MAX_URL {
            return Err(format!("is longer than {MAX_URL} characters"));
        }
        let url = reqwest::Url::parse(text).map_err(|e| format!("is not an absolute URL: {e}"))?;
        match url.scheme() {
            "https" => {}
            "http" if self.allow_http => {}
            "http" => return Err("must be https (this deployment does not admit plain http)".into()),
            other => return Err(format!("must be https, not {other}")),
        }
        if !url.username().is_empty() || url.password().is_some() {
            return Err("must not hold credentials: the signature proves who sends".into());
        }
        if url.host_str().is_none_or(str::is_empty) {
            return Err("names no host".into());
        }
        if url.fragment().is_some() {
            return Err("must not have a fragment".into());
        }
        Ok(url)
    }

    /// The addresses `host` stands for, every one of them admitted (an IP literal stands
    /// for itself).
    pub async fn addresses(&self, host: &str) -> Result<Vec<IpAddr>, String> {
        let ips = match host.parse::<IpAddr>() {
            Ok(ip) => vec![ip],
            Err(_) => {
                let ips = self.resolver.resolve(host).await.map_err(|e| format!("`{host}` does not resolve: {e}"))?;
                if ips.is_empty() {
                    return Err(format!("`{host}` resolves to no address"));
                }
                ips
            }
        };
        let literal = host.parse::<IpAddr>().is_ok();
        match ips.iter().find_map(|ip| self.refusal(*ip)) {
            Some(kind) if literal => Err(format!("is refused: `{host}` is {kind}")),
            Some(kind) => Err(format!("is refused: `{host}` resolves to {kind}")),
            None => Ok(ips),
        }
    }
}

/// reqwest's resolver for deliveries: resolves with the policy's resolver and hands the
/// connection only addresses the policy admits, so the check and the connection are one.
#[derive(Debug)]
pub(crate) struct PolicyResolver(pub Policy);

impl reqwest::dns::Resolve for PolicyResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let policy = self.0.clone();
        let host = name.as_str().to_owned();
        Box::pin(async move {
            let ips = policy
                .addresses(&host)
                .await
                .map_err(|refused| io::Error::new(io::ErrorKind::PermissionDenied, refused))?;
            let addrs: reqwest::dns::Addrs = Box::new(ips.into_iter().map(|ip| SocketAddr::new(ip, 0)));
            Ok(addrs)
        })
    }
}

enum Class {
    Loopback,
    Public,
    /// Refused, with the kind of address it is.
    Refused(&'static str),
}

/// The IANA IPv4 special-purpose address registry (and multicast, from its own
/// registry), loopback aside: none of it is a place a webhook may go. Each entry is
/// `(network, prefix length, what it is)`; the most specific entry comes first.
const V4: &[(Ipv4Addr, u8, &str)] = &[
    (Ipv4Addr::new(0, 0, 0, 0), 8, "\"this network\""),
    (Ipv4Addr::new(10, 0, 0, 0), 8, "private-use"),
    (Ipv4Addr::new(100, 64, 0, 0), 10, "shared (carrier-grade NAT)"),
    (Ipv4Addr::new(169, 254, 0, 0), 16, "link-local"),
    (Ipv4Addr::new(172, 16, 0, 0), 12, "private-use"),
    (Ipv4Addr::new(192, 0, 0, 0), 24, "IETF protocol assignment"),
    (Ipv4Addr::new(192, 0, 2, 0), 24, "documentation"),
    (Ipv4Addr::new(192, 31, 196, 0), 24, "AS112"),
    (Ipv4Addr::new(192, 52, 193, 0), 24, "AMT"),
    (Ipv4Addr::new(192, 88, 99, 0), 24, "6to4 relay anycast"),
    (Ipv4Addr::new(192, 168, 0, 0), 16, "private-use"),
    (Ipv4Addr::new(192, 175, 48, 0), 24, "AS112"),
    (Ipv4Addr::new(198, 18, 0, 0), 15, "benchmarking"),
    (Ipv4Addr::new(198, 51, 100, 0), 24, "documentation"),
    (Ipv4Addr::new(203, 0, 113, 0), 24, "documentation"),
    (Ipv4Addr::new(224, 0, 0, 0), 4, "multicast"),
    (Ipv4Addr::new(255, 255, 255, 255), 32, "broadcast"),
    (Ipv4Addr::new(240, 0, 0, 0), 4, "reserved"),
];

/// The IANA IPv6 special-purpose address registry (and multicast), loopback and the
/// IPv4-embedding forms aside (their IPv4 address is judged: [`embedded_v4`]). Addresses
/// outside global unicast (2000::/3) that no entry names are refused as reserved.
const V6: &[(Ipv6Addr, u8, &str)] = &[
    (Ipv6Addr::UNSPECIFIED, 128, "unspecified"),
    (Ipv6Addr::new(0x64, 0xff9b, 1, 0, 0, 0, 0, 0), 48, "local-use NAT64"),
    (Ipv6Addr::new(0x100, 0, 0, 0, 0, 0, 0, 0), 64, "discard-only"),
    (Ipv6Addr::new(0x100, 0, 0, 1, 0, 0, 0, 0), 64, "dummy"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 32, "Teredo"),
    (Ipv6Addr::new(0x2001, 0, 0, 0, 0, 0, 0, 0), 23, "IETF protocol assignment"),
    (Ipv6Addr::new(0x2001, 0xdb8, 0, 0, 0, 0, 0, 0), 32, "documentation"),
    (Ipv6Addr::new(0x2002, 0, 0, 0, 0, 0, 0, 0), 16, "6to4"),
    (Ipv6Addr::new(0x3fff, 0, 0, 0, 0, 0, 0, 0), 20, "documentation"),
    (Ipv6Addr::new(0x5f00, 0, 0, 0, 0, 0, 0, 0), 16, "segment routing (SRv6)"),
    (Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0), 7, "unique-local (private)"),
    (Ipv6Addr::new(0xfe80, 0, 0, 0, 0, 0, 0, 0), 10, "link-local"),
    (Ipv6Addr::new(0xfec0, 0, 0, 0, 0, 0, 0, 0), 10, "site-local"),
    (Ipv6Addr::new(0xff00, 0, 0, 0, 0, 0, 0, 0), 8, "multicast"),
];

fn class(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => class_v4(v4),
        IpAddr::V6(v6) => class_v6(v6),
    }
}

fn class_v4(ip: Ipv4Addr) -> Class {
    if ip.is_loopback() {
        return Class::Loopback;
    }
    let bits = u32::from(ip);
    let within = |net: Ipv4Addr, len: u8| bits & (u32::MAX << (32 - u32::from(len))) == u32::from(net);
    match V4.iter().find(|(net, len, _)| within(*net, *len)) {
        Some((_, _, kind)) => Class::Refused(kind),
        None => Class::Public,
    }
}

fn class_v6(ip: Ipv6Addr) -> Class {
    // An IPv4 address written as IPv6 reaches that IPv4 address: judged as it.
    if let Some(v4) = embedded_v4(ip) {
        return class_v4(v4);
    }
    if ip.is_loopback() {
        return Class::Loopback;
    }
    let bits = u128::from(ip);
    let within = |net: Ipv6Addr, len: u8| bits & (u128::MAX << (128 - u32::from(len))) == u128::from(net);
    match V6.iter().find(|(net, len, _)| within(*net, *len)) {
        Some((_, _, kind)) => Class::Refused(kind),
        None if !within(Ipv6Addr::new(0x2000, 0, 0, 0, 0, 0, 0, 0), 3) => Class::Refused("reserved"),
        None => Class::Public,
    }
}

/// The IPv4 address inside an IPv6 address that stands for it: IPv4-mapped
/// (`::ffff:a.b.c.d`), IPv4-translated (`::ffff:0:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`) or the well-known NAT64 prefix (`64:ff9b::a.b.c.d`). 6to4, Teredo and
/// local-use NAT64 embed addresses too, and are refused whole (`V6`).
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mapped = s[..5] == [0; 5] && s[5] == 0xffff;
    let translated = s[..4] == [0; 4] && s[4] == 0xffff && s[5] == 0;
    let compatible = s[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified();
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    (mapped || translated || compatible || nat64).then_some(tail)
}

#[cfg(test)]
mod tests {
    use super::super::SystemResolver;
    use super::*;
    use std::future::Future;
    use std::pin::Pin;

    fn policy(allow_loopback: bool) -> Policy {
        Policy { allow_http: false, allow_loopback, resolver: Arc::new(SystemResolver) }
    }

    /// Every range of the IANA special-purpose registries (IPv4 and IPv6) and multicast,
    /// by its first and last address, with the kind the refusal names; the IPv4-embedding
    /// IPv6 forms judged by their IPv4 address.
    const REFUSED: &[(&str, &str)] = &[
        ("0.0.0.0", "this network"),
        ("0.255.255.255", "this network"),
        ("10.0.0.0", "private-use"),
        ("10.255.255.255", "private-use"),
        ("100.64.0.0", "carrier-grade NAT"),
        ("100.127.255.255", "carrier-grade NAT"),
        ("169.254.0.0", "link-local"),
        ("169.254.169.254", "link-local"),
        ("172.16.0.0", "private-use"),
        ("172.31.255.255", "private-use"),
        ("192.0.0.0", "IETF protocol assignment"),
        ("192.0.0.10", "IETF protocol assignment"),
        ("192.0.0.255", "IETF protocol assignment"),
        ("192.0.2.1", "documentation"),
        ("192.31.196.1", "AS112"),
        ("192.52.193.1", "AMT"),
        ("192.88.99.1", "6to4 relay anycast"),
        ("192.168.0.0", "private-use"),
        ("192.168.255.255", "private-use"),
        ("192.175.48.1", "AS112"),
        ("198.18.0.0", "benchmarking"),
        ("198.18.0.1", "benchmarking"),
        ("198.19.255.255", "benchmarking"),
        ("198.51.100.7", "documentation"),
        ("203.0.113.7", "documentation"),
        ("224.0.0.1", "multicast"),
        ("239.255.255.250", "multicast"),
        ("240.0.0.1", "reserved"),
        ("255.255.255.254", "reserved"),
        ("255.255.255.255", "broadcast"),
        ("::", "unspecified"),
        ("64:ff9b:1::a00:1", "local-use NAT64"),
        ("64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "local-use NAT64"),
        ("100::1", "discard-only"),
        ("100:0:0:1::1", "dummy"),
        ("2001::1", "Teredo"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
        ("2001:1::1", "IETF protocol assignment"),
        ("2001:2::1", "IETF protocol assignment"),
        ("2001:1ff:ffff::1", "IETF protocol assignment"),
        ("2001:db8::1", "documentation"),
        ("2002::1", "6to4"),
        ("2002:a00:1::1", "6to4"),
        ("2002:808:808::1", "6to4"),
        ("3fff::1", "documentation"),
        ("5f00::1", "segment routing"),
        ("fc00::1", "unique-local"),
        ("fdff:ffff::1", "unique-local"),
        ("fe80::1", "link-local"),
        ("febf:ffff::1", "link-local"),
        ("fec0::1", "site-local"),
        ("ff02::1", "multicast"),
        ("4000::1", "reserved"),
        ("::2:0:0:1", "reserved"),
        // IPv4 inside IPv6: mapped, translated, compatible, well-known NAT64.
        ("::ffff:10.0.0.1", "private-use"),
        ("::ffff:169.254.169.254", "link-local"),
        ("::ffff:0:a00:1", "private-use"),
        ("::ffff:0:c0a8:1", "private-use"),
        ("::10.0.0.1", "private-use"),
        ("64:ff9b::a00:1", "private-use"),
        ("64:ff9b::c612:1", "benchmarking"),
    ];
    const LOOPBACK: &[&str] =
        &["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1", "::ffff:0:7f00:1", "64:ff9b::7f00:1"];
    /// The addresses just outside the refused ranges, and public ones in IPv6 forms.
    const PUBLIC: &[&str] = &[
        "1.1.1.1",
        "8.8.8.8",
        "93.184.216.34",
        "9.255.255.255",
        "11.0.0.0",
        "100.63.255.255",
        "100.128.0.0",
        "172.15.255.255",
        "172.32.0.0",
        "192.0.1.0",
        "192.0.3.0",
        "192.167.255.255",
        "192.169.0.0",
        "198.17.255.255",
        "198.20.0.0",
        "223.255.255.255",
        "2606:2800:220:1::1",
        "2001:200::1",
        "2003::1",
        "::ffff:8.8.8.8",
        "64:ff9b::808:808",
    ];

    #[test]
    fn every_special_purpose_range_is_refused_by_kind_and_loopback_only_where_allowed() {
        let strict = policy(false);
        let local = policy(true);
        for (ip, kind) in REFUSED {
            let addr: IpAddr = ip.parse().unwrap();
            let why = strict.refusal(addr).unwrap_or_else(|| panic!("{ip} admitted"));
            assert!(why.contains(kind), "{ip}: {why}, not {kind}");
            assert!(!why.contains(ip), "{ip}: the refusal names the address");
            assert!(!local.admits(addr), "{ip} admitted where loopback is");
        }
        for ip in LOOPBACK {
            let addr: IpAddr = ip.parse().unwrap();
            assert_eq!(strict.refusal(addr).as_deref(), Some("a loopback address"), "{ip}");
            assert!(local.admits(addr), "{ip} with allow_loopback");
        }
        for ip in PUBLIC {
            let addr: IpAddr = ip.parse().unwrap();
            assert!(strict.admits(addr), "{ip} refused: {:?}", strict.refusal(addr));
            assert!(!local.admits(addr), "{ip} admitted where only loopback is");
        }
    }

    /// A name's refusal says what kind of address it resolves to, never which.
    #[tokio::test]
    async fn a_refused_name_says_the_kind_of_address_never_the_address() {
        #[derive(Debug)]
        struct Internal;
        impl Resolver for Internal {
            fn resolve<'a>(&'a self, _: &'a str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>> {
                Box::pin(async { Ok(vec!["93.184.216.34".parse().unwrap(), "10.20.30.40".parse().unwrap()]) })
            }
        }
        let p = Policy { allow_http: false, allow_loopback: false, resolver: Arc::new(Internal) };
        let why = p.check("https://db.internal/hook").await.unwrap_err();
        assert_eq!(why, "is refused: `db.internal` resolves to a private-use address");
        let why = p.check("https://[::ffff:0:a00:1]/hook").await.unwrap_err();
        assert_eq!(why, "is refused: `::ffff:0:a00:1` is a private-use address");
    }

    #[test]
    fn a_url_must_be_https_without_credentials() {
        let p = policy(false);
        assert!(p.form("https://hooks.example.com/in?x=1").is_ok());
        for bad in [
            "http://hooks.example.com/",
            "ftp://x/",
            "https://user:pw@hooks.example.com/",
            "hooks.example.com",
            "https://x/#f",
        ] {
            assert!(p.form(bad).is_err(), "{bad}");
        }
        assert!(Policy { allow_http: true, ..p }.form("http://hooks.example.com/").is_ok());
    }
}
