//! The address a request came from, as the per-address budgets and the audit log see it.
//!
//! Behind a reverse proxy every request arrives from the proxy, so the budgets of a public key
//! and the lockout after failed authentications would be shared by every shopper behind it.
//! A proxy the operator names (`HOLDFAST_TRUSTED_PROXIES`) is believed about who it forwards:
//! the address is the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy.
//! Entries to the left of that one were written by the client, who can write anything there;
//! a request that does not come from a trusted proxy has its `X-Forwarded-For` ignored.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;

use actix_web::http::header::HeaderValue;
use actix_web::web;
use actix_web::{HttpMessage as _, HttpRequest};
use ipnet::{IpNet, Ipv4Net};

/// The networks whose connections are proxies forwarding for someone else.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies(Vec<IpNet>);

impl TrustedProxies {
    /// No proxy: every address is the TCP peer's.
    pub const NONE: Self = Self(Vec::new());

    fn trusts(&self, address: IpAddr) -> bool {
        self.0.iter().any(|net| net.contains(&address))
    }

    /// The address a request came from, given the TCP peer and the `X-Forwarded-For` headers
    /// in the order they arrived.
    pub fn client<'a>(
        &self,
        peer: Option<IpAddr>,
        forwarded_for: impl DoubleEndedIterator<Item = &'a HeaderValue>,
    ) -> Option<IpAddr> {
        let mut client = peer?.to_canonical();
        if !self.trusts(client) {
            return Some(client);
        }
        // Right to left: each hop we trust tells us who it heard from.
        for value in forwarded_for.rev() {
            // A header that is not text was not written by the proxy we trust: stop at it.
            let Ok(text) = value.to_str() else {
                return Some(client);
            };
            for entry in text.rsplit(',') {
                let Some(address) = forwarded_address(entry) else {
                    return Some(client);
                };
                client = address;
                if !self.trusts(client) {
                    return Some(client);
                }
            }
        }
        Some(client)
    }
}

/// One `X-Forwarded-For` entry: an address, optionally with a port (`192.0.2.1:443`,
/// `[2001:db8::1]:443`) as some proxies write it.
fn forwarded_address(entry: &str) -> Option<IpAddr> {
    let entry = entry.trim();
    IpAddr::from_str(entry)
        .ok()
        .or_else(|| SocketAddr::from_str(entry).ok().map(|s| s.ip()))
        .map(|address| address.to_canonical())
}

impl FromStr for TrustedProxies {
    type Err = String;

    /// A comma-separated list of addresses and networks: `127.0.0.1, 10.0.0.0/8, ::1`.
    fn from_str(list: &str) -> Result<Self, String> {
        let mut nets = Vec::new();
        for (at, entry) in list.split(',').map(str::trim).enumerate() {
            if entry.is_empty() {
                continue;
            }
            let net = IpNet::from_str(entry)
                .or_else(|_| IpAddr::from_str(entry).map(IpNet::from))
                .map_err(|_| {
                    format!(
                        "entry {} is neither an IP address nor a network such as 10.0.0.0/8",
                        at.saturating_add(1)
                    )
                })?;
            nets.push(as_peers_are_seen(net.trunc()));
        }
        Ok(Self(nets))
    }
}

/// `net` as peers are compared with it: an IPv4-mapped IPv6 network (`::ffff:10.0.0.0/104`)
/// as the IPv4 network it maps, since peers are seen in their IPv4 form.
fn as_peers_are_seen(net: IpNet) -> IpNet {
    if let IpNet::V6(v6) = net
        && let Some(v4) = v6.network().to_ipv4_mapped()
        && let Some(prefix) = v6.prefix_len().checked_sub(96)
    {
        #[expect(
            clippy::expect_used,
            reason = "an IPv6 prefix is at most 128, so less 96 at most 32"
        )]
        return IpNet::V4(Ipv4Net::new(v4, prefix).expect("an IPv4 prefix of at most 32"));
    }
    net
}

/// A request's address once worked out, kept with it: the gate, the rate limits and the audit
/// log all ask, and the headers are walked once.
#[derive(Debug, Clone, Copy)]
struct Resolved(Option<IpAddr>);

/// The address `req` came from: through the proxies `serve` was told to trust.
pub fn client_address(req: &HttpRequest) -> Option<IpAddr> {
    if let Some(Resolved(address)) = req.extensions().get::<Resolved>() {
        return *address;
    }
    let peer = req.peer_addr().map(|a| a.ip());
    let address = match req.app_data::<web::Data<TrustedProxies>>() {
        Some(proxies) => proxies.client(peer, req.headers().get_all("x-forwarded-for")),
        None => peer,
    };
    req.extensions_mut().insert(Resolved(address));
    address
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn the_client_is_the_rightmost_address_no_trusted_proxy_wrote() {
        let proxies: TrustedProxies = "127.0.0.1, 10.0.0.0/8, ::1".parse().unwrap();
        // (peer, X-Forwarded-For headers in order, expected address)
        let cases: &[(&str, &[&str], &str)] = &[
            // Not from a proxy: whatever it claims is ignored.
            ("198.51.100.7", &["203.0.113.9"], "198.51.100.7"),
            ("198.51.100.7", &[], "198.51.100.7"),
            // From a proxy: the address it appended.
            ("127.0.0.1", &["203.0.113.9"], "203.0.113.9"),
            ("::1", &["2001:db8::5"], "2001:db8::5"),
            ("::ffff:127.0.0.1", &["203.0.113.9"], "203.0.113.9"),
            // The client's own entries sit to the left of the proxy's and are not believed.
            ("127.0.0.1", &["1.1.1.1, 203.0.113.9"], "203.0.113.9"),
            ("127.0.0.1", &["1.1.1.1", "203.0.113.9"], "203.0.113.9"),
            // Through two trusted proxies: past both.
            ("127.0.0.1", &["203.0.113.9, 10.1.2.3"], "203.0.113.9"),
            ("127.0.0.1", &["203.0.113.9", "10.1.2.3"], "203.0.113.9"),
            // Ports, as some proxies write them.
            ("127.0.0.1", &["203.0.113.9:51234"], "203.0.113.9"),
            ("127.0.0.1", &["[2001:db8::5]:443"], "2001:db8::5"),
            ("127.0.0.1", &[" 203.0.113.9 "], "203.0.113.9"),
            // A proxy that names no one: the proxy itself.
            ("127.0.0.1", &[], "127.0.0.1"),
            ("127.0.0.1", &["10.1.2.3"], "10.1.2.3"),
            // Garbage stops the walk at the last hop believed; what lies left of it is unread.
            ("127.0.0.1", &["203.0.113.9, <script>"], "127.0.0.1"),
            (
                "127.0.0.1",
                &["203.0.113.9, 10.1.2.3, unknown"],
                "127.0.0.1",
            ),
            ("127.0.0.1", &["unknown, 203.0.113.9"], "203.0.113.9"),
            ("127.0.0.1", &["203.0.113.9, 10.1.2.3, "], "127.0.0.1"),
            ("127.0.0.1", &["garbage, 10.1.2.3"], "10.1.2.3"),
        ];
        for (peer, headers, want) in cases {
            let values: Vec<HeaderValue> = headers
                .iter()
                .map(|h| HeaderValue::from_str(h).unwrap())
                .collect();
            assert_eq!(
                proxies.client(Some(addr(peer)), values.iter()),
                Some(addr(want)),
                "{peer} {headers:?}"
            );
        }
    }

    #[test]
    fn a_header_that_is_not_text_is_not_believed() {
        let proxies: TrustedProxies = "127.0.0.1".parse().unwrap();
        let values = [HeaderValue::from_bytes(b"203.0.113.9\xff").unwrap()];
        assert_eq!(
            proxies.client(Some(addr("127.0.0.1")), values.iter()),
            Some(addr("127.0.0.1"))
        );
    }

    #[test]
    fn with_no_proxy_trusted_the_peer_is_the_client() {
        let values = [HeaderValue::from_static("203.0.113.9")];
        for peer in ["127.0.0.1", "::1", "10.1.2.3"] {
            assert_eq!(
                TrustedProxies::NONE.client(Some(addr(peer)), values.iter()),
                Some(addr(peer))
            );
        }
        assert_eq!(TrustedProxies::NONE.client(None, values.iter()), None);
    }

    #[test]
    fn the_list_names_the_entry_it_cannot_read_and_never_repeats_it() {
        assert_eq!("".parse::<TrustedProxies>(), Ok(TrustedProxies::NONE));
        let parsed: TrustedProxies = " 10.0.0.7/8 ,, 192.0.2.1 ".parse().unwrap();
        assert!(parsed.trusts(addr("10.200.0.1")), "a network, truncated");
        assert!(parsed.trusts(addr("192.0.2.1")));
        assert!(
            !parsed.trusts(addr("192.0.2.2")),
            "an address is itself only"
        );
        // Written IPv4-mapped, as some configurations do: trusted as the IPv4 peers are seen.
        let mapped: TrustedProxies = "::ffff:10.0.0.0/104, ::ffff:192.0.2.1".parse().unwrap();
        for seen in ["10.1.2.3", "::ffff:10.1.2.3", "192.0.2.1"] {
            let forwarded = [HeaderValue::from_static("203.0.113.9")];
            assert_eq!(
                mapped.client(Some(addr(seen)), forwarded.iter()),
                Some(addr("203.0.113.9")),
                "{seen}"
            );
        }
        assert!(!mapped.trusts(addr("11.0.0.1")));
        for bad in ["10.0.0.0/33", "proxy.internal", "10.0.0.1, 300.1.1.1"] {
            let error = bad.parse::<TrustedProxies>().unwrap_err();
            assert!(error.starts_with("entry "), "{error}");
            assert!(
                !error.contains("300") && !error.contains("proxy"),
                "{error}"
            );
        }
    }
}
