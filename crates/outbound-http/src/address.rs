//! Which addresses a webhook may reach: globally routable ones, plus the operator's allow list.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use ipnet::{IpNet, Ipv4Net, Ipv6Net};

/// The IANA special-purpose IPv4 ranges that no public receiver lives in.
const NON_PUBLIC_V4: &[Ipv4Net] = &[
    v4([0, 0, 0, 0], 8), // "this network", with the unspecified address
    v4([10, 0, 0, 0], 8),
    v4([100, 64, 0, 0], 10), // carrier-grade NAT
    v4([127, 0, 0, 0], 8),
    v4([169, 254, 0, 0], 16),
    v4([172, 16, 0, 0], 12),
    v4([192, 0, 0, 0], 24), // IETF protocol assignments
    v4([192, 0, 2, 0], 24),
    v4([192, 88, 99, 0], 24), // 6to4 relay anycast, deprecated
    v4([192, 168, 0, 0], 16),
    v4([198, 18, 0, 0], 15),
    v4([198, 51, 100, 0], 24),
    v4([203, 0, 113, 0], 24),
    v4([224, 0, 0, 0], 4),
    v4([240, 0, 0, 0], 4), // reserved, with the broadcast address
];

/// Only `2000::/3` is allocated for global unicast; everything outside it (loopback, unique-local,
/// link-local, site-local, multicast, discard) is refused without listing it.
const GLOBAL_UNICAST_V6: Ipv6Net = v6([0x2000, 0, 0, 0, 0, 0, 0, 0], 3);

/// The parts of `2000::/3` that are not public. Teredo (`2001::/32`) is judged before this list.
const NON_PUBLIC_V6: &[Ipv6Net] = &[
    v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 23), // IETF protocol assignments, benchmarking, ORCHID
    v6([0x2001, 0xdb8, 0, 0, 0, 0, 0, 0], 32),
    v6([0x3fff, 0, 0, 0, 0, 0, 0, 0], 20), // documentation (RFC 9637)
];

const IPV4_MAPPED: Ipv6Net = v6([0, 0, 0, 0, 0, 0xffff, 0, 0], 96);
const IPV4_COMPATIBLE: Ipv6Net = v6([0, 0, 0, 0, 0, 0, 0, 0], 96);
const NAT64: Ipv6Net = v6([0x64, 0xff9b, 0, 0, 0, 0, 0, 0], 96);
const SIX_TO_FOUR: Ipv6Net = v6([0x2002, 0, 0, 0, 0, 0, 0, 0], 16);
const TEREDO: Ipv6Net = v6([0x2001, 0, 0, 0, 0, 0, 0, 0], 32);

const fn v4(octets: [u8; 4], prefix: u8) -> Ipv4Net {
    let [a, b, c, d] = octets;
    Ipv4Net::new_assert(Ipv4Addr::new(a, b, c, d), prefix)
}

const fn v6(s: [u16; 8], prefix: u8) -> Ipv6Net {
    Ipv6Net::new_assert(
        Ipv6Addr::new(s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]),
        prefix,
    )
}

/// Whether `ip` is globally routable. IPv6 forms that carry an IPv4 address (mapped, compatible,
/// NAT64, 6to4, Teredo) are judged by that address, since packets end up there.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => is_public_v4(ip),
        IpAddr::V6(ip) => is_public_v6(ip),
    }
}

/// Whether a webhook may connect to `ip`: public, or inside one of the allowed networks.
pub fn is_permitted(ip: IpAddr, allow: &[IpNet]) -> bool {
    // An allow list written in IPv4 should also cover the same hosts reached as ::ffff:a.b.c.d.
    let canonical = ip.to_canonical();
    is_public(ip)
        || allow
            .iter()
            .any(|net| net.contains(&ip) || net.contains(&canonical))
}

fn is_public_v4(ip: Ipv4Addr) -> bool {
    !NON_PUBLIC_V4.iter().any(|net| net.contains(&ip))
}

fn is_public_v6(ip: Ipv6Addr) -> bool {
    let s = ip.segments();
    if IPV4_MAPPED.contains(&ip) || IPV4_COMPATIBLE.contains(&ip) || NAT64.contains(&ip) {
        return is_public_v4(join(s[6], s[7]));
    }
    if SIX_TO_FOUR.contains(&ip) {
        return is_public_v4(join(s[1], s[2]));
    }
    if TEREDO.contains(&ip) {
        // Both the relay server and the (bit-inverted) client address must be public.
        return is_public_v4(join(s[2], s[3])) && is_public_v4(join(!s[6], !s[7]));
    }
    GLOBAL_UNICAST_V6.contains(&ip) && !NON_PUBLIC_V6.iter().any(|net| net.contains(&ip))
}

fn join(high: u16, low: u16) -> Ipv4Addr {
    Ipv4Addr::from((u32::from(high) << 16) | u32::from(low))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_covers_every_special_range() {
        let cases = [
            // IPv4: public.
            ("8.8.8.8", true),
            ("1.1.1.1", true),
            ("100.63.255.255", true),
            ("100.128.0.0", true),
            ("172.15.255.255", true),
            ("172.32.0.0", true),
            ("198.17.255.255", true),
            ("198.20.0.0", true),
            ("223.255.255.255", true),
            // IPv4: not public.
            ("0.0.0.0", false),
            ("0.1.2.3", false),
            ("10.0.0.1", false),
            ("100.64.0.1", false),
            ("100.127.255.254", false),
            ("127.0.0.1", false),
            ("127.255.255.254", false),
            ("169.254.169.254", false),
            ("172.16.0.1", false),
            ("172.31.255.255", false),
            ("192.0.0.8", false),
            ("192.0.2.1", false),
            ("192.88.99.1", false),
            ("192.168.1.1", false),
            ("198.18.0.1", false),
            ("198.19.255.255", false),
            ("198.51.100.7", false),
            ("203.0.113.9", false),
            ("224.0.0.1", false),
            ("239.255.255.250", false),
            ("240.0.0.1", false),
            ("255.255.255.255", false),
            // IPv6: public.
            ("2606:4700::1111", true),
            ("2001:4860:4860::8888", true),
            ("2a00:1450:4001::200e", true),
            ("2002:808:808::1", true),           // 6to4 around 8.8.8.8
            ("64:ff9b::808:808", true),          // NAT64 around 8.8.8.8
            ("2001:0:808:808::f7f7:f7f7", true), // Teredo: server and client 8.8.8.8
            // IPv6: not public.
            ("::", false),
            ("::1", false),
            ("::ffff:127.0.0.1", false),
            ("::ffff:10.1.2.3", false),
            ("::127.0.0.1", false),               // IPv4-compatible
            ("64:ff9b::a00:1", false),            // NAT64 around 10.0.0.1
            ("64:ff9b:1::1", false),              // local-use NAT64
            ("2002:7f00:1::1", false),            // 6to4 around 127.0.0.1
            ("2002:c0a8:101::1", false),          // 6to4 around 192.168.1.1
            ("2001:0:808:808::80ff:fffe", false), // Teredo client 127.0.0.1
            ("2001:0:a00:1::f7f7:f7f7", false),   // Teredo server 10.0.0.1
            ("2001:2::1", false),                 // benchmarking
            ("2001:db8::1", false),
            ("3fff::1", false),
            ("100::1", false), // discard-only
            ("fc00::1", false),
            ("fd12:3456::1", false),
            ("fe80::1", false),
            ("febf::1", false),
            ("fec0::1", false), // site-local
            ("ff02::1", false),
            ("ff0e::1", false),
        ];
        for (raw, public) in cases {
            let ip: IpAddr = raw.parse().unwrap();
            assert_eq!(is_public(ip), public, "{raw}");
            assert_eq!(is_permitted(ip, &[]), public, "{raw} with no allow list");
        }
    }

    #[test]
    fn the_allow_list_opens_listed_networks_only() {
        let allow: Vec<IpNet> = vec!["127.0.0.0/8".parse().unwrap(), "fd00::/8".parse().unwrap()];
        let cases = [
            ("127.0.0.1", true),
            ("127.1.2.3", true),
            ("::ffff:127.0.0.1", true),
            ("fd00::5", true),
            ("8.8.8.8", true),
            ("10.0.0.1", false),
            ("::1", false),
            ("fc00::1", false),
            ("169.254.169.254", false),
        ];
        for (raw, permitted) in cases {
            assert_eq!(
                is_permitted(raw.parse().unwrap(), &allow),
                permitted,
                "{raw}"
            );
        }
    }
}
