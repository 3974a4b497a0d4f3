//! How webhook targets' names are resolved: the system's resolver, or one a test controls.
//! Apart from the delivery code, so a deployment's settings name it in every build.

use std::future::Future;
use std::io;
use std::net::IpAddr;
use std::pin::Pin;

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
