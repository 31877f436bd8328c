//! Which addresses are outside the public internet: the ranges the proxy refuses unless the
//! allow-list names the address itself.
//!
//! IPv6 forms that carry an IPv4 address are judged by that address: IPv4-mapped
//! (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), the NAT64 prefixes (`64:ff9b::/96`,
//! RFC 6052; the local-use `64:ff9b:1::/48`, RFC 8215, is private whatever it carries) and 6to4
//! (`2002:aabb:ccdd::/48`).

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// A range outside the public internet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AddressClass {
    /// `0.0.0.0`, `::`: "this host", which connects to the local machine.
    Unspecified,
    /// `0.0.0.0/8`: "this network".
    ThisNetwork,
    /// `127.0.0.0/8`, `::1`.
    Loopback,
    /// `169.254.0.0/16` (cloud metadata lives at `169.254.169.254`), `fe80::/10`.
    LinkLocal,
    /// `10.0.0.0/8`, `172.16.0.0/12`, `192.168.0.0/16`; the deprecated IPv6 site-local
    /// `fec0::/10`; the local-use NAT64 prefix `64:ff9b:1::/48`.
    Private,
    /// `100.64.0.0/10`, carrier-grade NAT (RFC 6598; some clouds put metadata there).
    SharedCgnat,
    /// `fc00::/7` (AWS's IPv6 metadata is `fd00:ec2::254`).
    UniqueLocal,
    /// `224.0.0.0/4`, `ff00::/8`.
    Multicast,
    /// `255.255.255.255`.
    Broadcast,
    /// Everything else no public host uses: `192.0.0.0/24`, the documentation ranges
    /// (`192.0.2.0/24`, `198.51.100.0/24`, `203.0.113.0/24`, `2001:db8::/32`), benchmarking
    /// (`198.18.0.0/15`), `240.0.0.0/4`, the discard prefix `100::/64`.
    Reserved,
}

impl AddressClass {
    /// How a refusal names the class: "a loopback address", …
    pub fn describe(self) -> &'static str {
        match self {
            AddressClass::Unspecified => "the unspecified address (this host)",
            AddressClass::ThisNetwork => "a \"this network\" address (0.0.0.0/8)",
            AddressClass::Loopback => "a loopback address",
            AddressClass::LinkLocal => "a link-local address (cloud metadata)",
            AddressClass::Private => "a private address",
            AddressClass::SharedCgnat => "a shared (carrier-grade NAT) address",
            AddressClass::UniqueLocal => "a unique local IPv6 address",
            AddressClass::Multicast => "a multicast address",
            AddressClass::Broadcast => "the broadcast address",
            AddressClass::Reserved => "a reserved address",
        }
    }
}

/// An address outside the public internet, and the IPv4 address it carries when it is an IPv6
/// form of one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpecialAddress {
    /// Its range.
    pub class: AddressClass,
    /// The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), when the
    /// class comes from it.
    pub carried: Option<Ipv4Addr>,
}

impl fmt::Display for SpecialAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.class.describe())?;
        if let Some(v4) = self.carried {
            write!(f, " (carrying {v4})")?;
        }
        Ok(())
    }
}

/// The range `ip` belongs to, or `None` for a public address.
pub fn classify(ip: IpAddr) -> Option<SpecialAddress> {
    match ip {
        IpAddr::V4(v4) => classify_v4(v4).map(|class| SpecialAddress {
            class,
            carried: None,
        }),
        IpAddr::V6(v6) => classify_v6(v6),
    }
}

fn classify_v4(ip: Ipv4Addr) -> Option<AddressClass> {
    let [a, b, c, _] = ip.octets();
    Some(match (a, b, c) {
        _ if ip.is_unspecified() => AddressClass::Unspecified,
        _ if ip.is_broadcast() => AddressClass::Broadcast,
        (0, ..) => AddressClass::ThisNetwork,
        (127, ..) => AddressClass::Loopback,
        (169, 254, _) => AddressClass::LinkLocal,
        (10, ..) => AddressClass::Private,
        (172, 16..=31, _) => AddressClass::Private,
        (192, 168, _) => AddressClass::Private,
        (100, 64..=127, _) => AddressClass::SharedCgnat,
        (224..=239, ..) => AddressClass::Multicast,
        (240..=255, ..) => AddressClass::Reserved,
        (192, 0, 0) | (192, 0, 2) | (198, 51, 100) | (203, 0, 113) | (198, 18..=19, _) => {
            AddressClass::Reserved
        }
        _ => return None,
    })
}

fn classify_v6(ip: Ipv6Addr) -> Option<SpecialAddress> {
    let plain = |class| {
        Some(SpecialAddress {
            class,
            carried: None,
        })
    };
    let carrying = |v4: Ipv4Addr| {
        classify_v4(v4).map(|class| SpecialAddress {
            class,
            carried: Some(v4),
        })
    };
    let s = ip.segments();
    let v4_of = |hi: u16, lo: u16| {
        let [a, b] = hi.to_be_bytes();
        let [c, d] = lo.to_be_bytes();
        Ipv4Addr::new(a, b, c, d)
    };
    if ip.is_unspecified() {
        return plain(AddressClass::Unspecified);
    }
    if ip.is_loopback() {
        return plain(AddressClass::Loopback);
    }
    match s {
        // IPv4-mapped ::ffff:a.b.c.d and IPv4-compatible ::a.b.c.d.
        [0, 0, 0, 0, 0, 0xffff, hi, lo] | [0, 0, 0, 0, 0, 0, hi, lo] => carrying(v4_of(hi, lo)),
        // NAT64, well-known prefix (RFC 6052).
        [0x64, 0xff9b, 0, 0, 0, 0, hi, lo] => carrying(v4_of(hi, lo)),
        // NAT64, local-use prefix (RFC 8215): the operator's own network.
        [0x64, 0xff9b, 1, ..] => plain(AddressClass::Private),
        // 6to4.
        [0x2002, hi, lo, ..] => carrying(v4_of(hi, lo)),
        [0x2001, 0xdb8, ..] | [0x100, 0, 0, 0, ..] => plain(AddressClass::Reserved),
        [first, ..] if first & 0xffc0 == 0xfe80 => plain(AddressClass::LinkLocal),
        [first, ..] if first & 0xffc0 == 0xfec0 => plain(AddressClass::Private),
        [first, ..] if first & 0xfe00 == 0xfc00 => plain(AddressClass::UniqueLocal),
        [first, ..] if first & 0xff00 == 0xff00 => plain(AddressClass::Multicast),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_range_is_classified() {
        use AddressClass::*;
        let cases: &[(&str, Option<AddressClass>)] = &[
            ("0.0.0.0", Some(Unspecified)),
            ("0.1.2.3", Some(ThisNetwork)),
            ("0.255.255.255", Some(ThisNetwork)),
            ("127.0.0.1", Some(Loopback)),
            ("127.255.0.9", Some(Loopback)),
            ("169.254.169.254", Some(LinkLocal)),
            ("169.254.0.1", Some(LinkLocal)),
            ("10.0.0.1", Some(Private)),
            ("10.255.255.255", Some(Private)),
            ("172.16.0.1", Some(Private)),
            ("172.31.255.254", Some(Private)),
            ("172.15.255.255", None),
            ("172.32.0.0", None),
            ("192.168.1.1", Some(Private)),
            ("192.169.0.1", None),
            ("100.64.0.1", Some(SharedCgnat)),
            ("100.100.100.200", Some(SharedCgnat)),
            ("100.127.255.255", Some(SharedCgnat)),
            ("100.63.255.255", None),
            ("100.128.0.0", None),
            ("224.0.0.1", Some(Multicast)),
            ("239.255.255.250", Some(Multicast)),
            ("255.255.255.255", Some(Broadcast)),
            ("240.0.0.1", Some(Reserved)),
            ("192.0.2.7", Some(Reserved)),
            ("198.18.0.1", Some(Reserved)),
            ("8.8.8.8", None),
            ("93.184.216.34", None),
            ("::", Some(Unspecified)),
            ("::1", Some(Loopback)),
            ("fe80::1", Some(LinkLocal)),
            ("febf::1", Some(LinkLocal)),
            ("fec0::1", Some(Private)),
            ("fc00::1", Some(UniqueLocal)),
            ("fd00:ec2::254", Some(UniqueLocal)),
            ("ff02::1", Some(Multicast)),
            ("2001:db8::1", Some(Reserved)),
            ("100::1", Some(Reserved)),
            ("64:ff9b:1::a00:1", Some(Private)),
            ("2606:4700::1111", None),
            ("2001:4860:4860::8888", None),
            // Forms carrying an IPv4 address are judged by it.
            ("::ffff:127.0.0.1", Some(Loopback)),
            ("::ffff:169.254.169.254", Some(LinkLocal)),
            ("::ffff:10.1.2.3", Some(Private)),
            ("::ffff:0.0.0.0", Some(Unspecified)),
            ("::ffff:8.8.8.8", None),
            ("::127.0.0.1", Some(Loopback)),
            ("::192.168.0.1", Some(Private)),
            ("64:ff9b::127.0.0.1", Some(Loopback)),
            ("64:ff9b::169.254.169.254", Some(LinkLocal)),
            ("64:ff9b::100.64.0.1", Some(SharedCgnat)),
            ("64:ff9b::8.8.8.8", None),
            ("2002:7f00:1::", Some(Loopback)),
            ("2002:a9fe:a9fe::1", Some(LinkLocal)),
            ("2002:808:808::1", None),
        ];
        for (text, want) in cases {
            let ip: IpAddr = text.parse().unwrap();
            assert_eq!(classify(ip).map(|s| s.class), *want, "{text}");
        }
        let mapped = classify("::ffff:127.0.0.1".parse().unwrap()).unwrap();
        assert_eq!(mapped.carried, Some(Ipv4Addr::LOCALHOST));
        assert_eq!(
            mapped.to_string(),
            "a loopback address (carrying 127.0.0.1)"
        );
        assert_eq!(
            classify("169.254.169.254".parse().unwrap())
                .unwrap()
                .to_string(),
            "a link-local address (cloud metadata)"
        );
    }
}
