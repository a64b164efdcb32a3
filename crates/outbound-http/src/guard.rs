//! The SSRF guard: every address a webhook connects to is vetted first, and only vetted
//! addresses reach the connector, so a second DNS answer can never slip past the check.

use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use holdfast_domain::ports::SendFailure;
use hyper_util::client::legacy::connect::dns::Name;
use ipnet::IpNet;
use tower_service::Service;

use crate::address::is_permitted;

/// Why the guard stopped a connection; found again in hyper's error chain to pick the failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum GuardError {
    #[error("{0}")]
    Refused(String),
    #[error("{0}")]
    Dns(String),
}

impl GuardError {
    pub(crate) fn to_failure(&self) -> SendFailure {
        match self {
            Self::Refused(why) => SendFailure::Refused(why.clone()),
            Self::Dns(why) => SendFailure::Dns(why.clone()),
        }
    }
}

#[derive(Debug)]
pub(crate) struct AddressGuard {
    allow: Vec<IpNet>,
}

impl AddressGuard {
    pub(crate) fn new(allow: Vec<IpNet>) -> Self {
        Self { allow }
    }

    /// A host given as an address literal, which hyper connects to without asking the resolver.
    pub(crate) fn check_literal(&self, ip: IpAddr) -> Result<(), GuardError> {
        if is_permitted(ip, &self.allow) {
            Ok(())
        } else {
            Err(GuardError::Refused(format!("{ip} is not a public address")))
        }
    }

    /// All-or-nothing: one bad address refuses the host, since the connector may try any of them.
    fn vet(&self, host: &str, addrs: &[SocketAddr]) -> Result<(), GuardError> {
        match addrs
            .iter()
            .find(|addr| !is_permitted(addr.ip(), &self.allow))
        {
            None => Ok(()),
            Some(bad) => {
                // The address stays in our log: the delivery history is readable by the
                // platform, and must not become a map of our internal network.
                tracing::warn!(host, address = %bad.ip(), "outbound host refused by the SSRF guard");
                Err(GuardError::Refused(format!(
                    "{host} resolves to an address that is not public"
                )))
            }
        }
    }
}

/// A DNS resolver for hyper-util's `HttpConnector` that looks each name up once and hands back
/// the addresses only if all of them pass the guard.
///
/// A `pinned` address (tests standing in for a named host) replaces the lookup, and is vetted
/// all the same.
#[derive(Debug, Clone)]
pub(crate) struct GuardedResolver {
    guard: Arc<AddressGuard>,
    pinned: Option<SocketAddr>,
}

impl GuardedResolver {
    pub(crate) fn new(guard: Arc<AddressGuard>, pinned: Option<SocketAddr>) -> Self {
        Self { guard, pinned }
    }
}

impl Service<Name> for GuardedResolver {
    type Response = std::vec::IntoIter<SocketAddr>;
    type Error = GuardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, GuardError>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), GuardError>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, name: Name) -> Self::Future {
        let (guard, pinned) = (Arc::clone(&self.guard), self.pinned);
        Box::pin(async move {
            let host = name.as_str();
            // Port 0: the connector puts in the URL's port.
            let mut addrs: Vec<SocketAddr> = match pinned {
                Some(addr) => vec![addr],
                None => tokio::net::lookup_host((host, 0))
                    .await
                    .map_err(|e| GuardError::Dns(format!("{host}: {e}")))?
                    .collect(),
            };
            addrs.dedup();
            if addrs.is_empty() {
                return Err(GuardError::Dns(format!("{host}: no addresses")));
            }
            guard.vet(host, &addrs)?;
            Ok(addrs.into_iter())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn guard(allow: &[&str]) -> AddressGuard {
        AddressGuard::new(allow.iter().map(|n| n.parse().unwrap()).collect())
    }

    #[test]
    fn one_private_address_refuses_the_host() {
        let addrs: Vec<SocketAddr> =
            vec!["8.8.8.8:0".parse().unwrap(), "10.0.0.7:0".parse().unwrap()];
        let err = guard(&[]).vet("mixed.example", &addrs).unwrap_err();
        assert_eq!(
            err,
            GuardError::Refused("mixed.example resolves to an address that is not public".into())
        );
        assert_eq!(guard(&["10.0.0.0/8"]).vet("mixed.example", &addrs), Ok(()));
    }

    #[test]
    fn literals_are_checked_the_same_way() {
        let loopback: IpAddr = "127.0.0.1".parse().unwrap();
        assert_eq!(
            guard(&[]).check_literal(loopback),
            Err(GuardError::Refused(
                "127.0.0.1 is not a public address".into()
            ))
        );
        assert_eq!(guard(&["127.0.0.0/8"]).check_literal(loopback), Ok(()));
    }

    #[tokio::test]
    async fn the_resolver_refuses_localhost() {
        let mut resolver = GuardedResolver::new(Arc::new(guard(&[])), None);
        let err = resolver
            .call("localhost".parse().unwrap())
            .await
            .unwrap_err();
        let GuardError::Refused(why) = err else {
            panic!("{err:?}")
        };
        assert_eq!(why, "localhost resolves to an address that is not public");
    }
}
