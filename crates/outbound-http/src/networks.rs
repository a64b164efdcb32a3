//! The operator's allow list, as written in `HOLDFAST_WEBHOOK_ALLOW_NETWORKS`.

use std::net::IpAddr;

use ipnet::IpNet;

/// Parses a comma-separated list of networks (`10.0.0.0/8, fd00::/8`); a bare address stands
/// for that one host. Blank entries are skipped, so an empty value is an empty list.
pub fn parse_networks(raw: &str) -> Result<Vec<IpNet>, String> {
    raw.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            entry
                .parse::<IpNet>()
                .or_else(|_| entry.parse::<IpAddr>().map(IpNet::from))
                .map_err(|_| format!("{entry:?} is not an IP network (like 10.0.0.0/8) or address"))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn networks_and_bare_addresses() {
        let nets = parse_networks(" 127.0.0.0/8,10.1.2.3 , fd00::/8,::1,").unwrap();
        let shown: Vec<String> = nets.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["127.0.0.0/8", "10.1.2.3/32", "fd00::/8", "::1/128"]);
        assert_eq!(parse_networks("").unwrap(), []);
        assert_eq!(parse_networks("  ").unwrap(), []);
    }

    #[test]
    fn a_bad_entry_is_named() {
        for (raw, bad) in [
            ("10.0.0.0/8,nope", "\"nope\""),
            ("10.0.0.0/33", "\"10.0.0.0/33\""),
            ("1.2.3", "\"1.2.3\""),
        ] {
            let err = parse_networks(raw).unwrap_err();
            assert!(err.contains(bad), "{raw}: {err}");
        }
    }
}
