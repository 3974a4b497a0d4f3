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

use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

/// The longest URL a subscription takes.
pub const MAX_URL: usize = restgen_model::bounds::MAX_WEBHOOK_URL;

/// Resolves host names to addresses: the system's resolver, or one a test controls.
pub trait Resolver: Send + Sync + std::fmt::Debug + 'static {
    fn resolve<'a>(&'a self, host: &'a str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>>;
}

/// The operating system's resolver.
#[derive(Debug)]
pub struct SystemResolver;

impl Resolver for SystemResolver {
    fn resolve<'a>(&'a self, host: &'a str) -> Pin<Box<dyn Future<Output = io::Result<Vec<IpAddr>>> + Send + 'a>> {
        Box::pin(async move { Ok(tokio::net::lookup_host((host, 0)).await?.map(|a| a.ip()).collect()) })
    }
}

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
        match class(ip) {
            Class::Loopback => self.allow_loopback,
            Class::Public => !self.allow_loopback,
            Class::Refused(_) => false,
        }
    }

    /// Why `ip` is refused, for the subscriber.
    fn refusal(&self, ip: IpAddr) -> String {
        match class(ip) {
            Class::Loopback => format!("{ip} is a loopback address"),
            Class::Public => format!("{ip} is off this machine, and this deployment admits loopback targets only"),
            Class::Refused(range) => format!("{ip} is in a {range} range"),
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
        match ips.iter().find(|ip| !self.admits(**ip)) {
            Some(ip) => Err(format!("`{host}` is refused: {}", self.refusal(*ip))),
            None => Ok(ips),
        }
    }
}

/// reqwest's resolver for deliveries: resolves with the policy's resolver and hands the
/// connection only addresses the policy admits, so the check and the connection are one.
#[derive(Debug)]
pub(crate) struct Guarded(pub Policy);

impl reqwest::dns::Resolve for Guarded {
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
    Refused(&'static str),
}

fn class(ip: IpAddr) -> Class {
    match ip {
        IpAddr::V4(v4) => class_v4(v4),
        IpAddr::V6(v6) => {
            // An IPv4 address written as IPv6 reaches that IPv4 address: judged as it.
            if let Some(v4) = embedded_v4(v6) {
                return class_v4(v4);
            }
            let s = v6.segments();
            if v6.is_loopback() {
                Class::Loopback
            } else if v6.is_unspecified() {
                Class::Refused("unspecified")
            } else if s[0] & 0xfe00 == 0xfc00 {
                Class::Refused("private (unique local)")
            } else if s[0] & 0xffc0 == 0xfe80 || s[0] & 0xffc0 == 0xfec0 {
                Class::Refused("link-local")
            } else if s[0] & 0xff00 == 0xff00 {
                Class::Refused("multicast")
            } else {
                Class::Public
            }
        }
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`) or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address.
fn embedded_v4(v6: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = v6.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let mapped = s[..5] == [0; 5] && s[5] == 0xffff;
    let compatible = s[..6] == [0; 6] && !v6.is_loopback() && !v6.is_unspecified();
    let nat64 = s[0] == 0x64 && s[1] == 0xff9b && s[2..6] == [0; 4];
    (mapped || compatible || nat64).then_some(tail)
}

fn class_v4(ip: Ipv4Addr) -> Class {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Class::Loopback
    } else if ip.is_unspecified() || a == 0 {
        Class::Refused("unspecified (\"this network\")")
    } else if ip.is_private() {
        Class::Refused("private")
    } else if ip.is_link_local() {
        Class::Refused("link-local")
    } else if a == 100 && (64..128).contains(&b) {
        Class::Refused("carrier-grade NAT")
    } else if ip.is_multicast() {
        Class::Refused("multicast")
    } else if ip.is_broadcast() || a >= 240 {
        Class::Refused("reserved")
    } else {
        Class::Public
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(allow_loopback: bool) -> Policy {
        Policy { allow_http: false, allow_loopback, resolver: Arc::new(SystemResolver) }
    }

    #[test]
    fn only_public_addresses_are_admitted_and_loopback_only_where_allowed() {
        let refused = [
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "100.127.255.254",
            "224.0.0.1",
            "239.255.255.250",
            "0.0.0.0",
            "0.1.2.3",
            "255.255.255.255",
            "240.0.0.1",
            "::",
            "fc00::1",
            "fd12:3456::1",
            "fe80::1",
            "fec0::1",
            "ff02::1",
            "::ffff:10.0.0.1",
            "::ffff:169.254.169.254",
            "::ffff:192.168.0.1",
            "64:ff9b::a00:1",
            "::10.0.0.1",
        ];
        let loopback = ["127.0.0.1", "127.255.0.9", "::1", "::ffff:127.0.0.1"];
        let public = ["93.184.216.34", "8.8.8.8", "100.128.0.1", "172.32.0.1", "2606:2800:220:1::1", "::ffff:8.8.8.8"];
        for (allow_loopback, admitted) in [(false, &public[..]), (true, &loopback[..])] {
            let p = policy(allow_loopback);
            let admitted: Vec<IpAddr> = admitted.iter().map(|a| a.parse().unwrap()).collect();
            for ip in refused.iter().chain(&loopback).chain(&public) {
                let ip: IpAddr = ip.parse().unwrap();
                assert_eq!(p.admits(ip), admitted.contains(&ip), "{ip} with allow_loopback = {allow_loopback}");
            }
        }
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
