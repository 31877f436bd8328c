//! The server name a TLS ClientHello asks for (the `server_name` extension, RFC 6066), read from
//! the first record a tunnel's client sends.

/// Bytes of a TLS record header.
pub const RECORD_HEADER: usize = 5;

/// The largest record a TLS client may send (2^14 plus expansion room).
pub const MAX_RECORD: usize = 16_384 + 2048;

/// Why a first record is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum SniError {
    /// The handshake record is not a whole ClientHello (split across records, or malformed).
    #[error("the TLS ClientHello is malformed or split across records")]
    Malformed,
}

/// The length of the record whose header is `header`, when it is a TLS handshake record.
pub fn handshake_record_len(header: &[u8; RECORD_HEADER]) -> Option<usize> {
    (header[0] == 0x16 && header[1] == 3)
        .then(|| usize::from(u16::from_be_bytes([header[3], header[4]])))
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], SniError> {
        if self.0.len() < n {
            return Err(SniError::Malformed);
        }
        let (head, tail) = self.0.split_at(n);
        self.0 = tail;
        Ok(head)
    }
    fn u8(&mut self) -> Result<usize, SniError> {
        Ok(usize::from(self.take(1)?[0]))
    }
    fn u16(&mut self) -> Result<usize, SniError> {
        let b = self.take(2)?;
        Ok(usize::from(u16::from_be_bytes([b[0], b[1]])))
    }
    fn u24(&mut self) -> Result<usize, SniError> {
        let b = self.take(3)?;
        Ok(usize::from(b[0]) << 16 | usize::from(b[1]) << 8 | usize::from(b[2]))
    }
}

/// The host name in the ClientHello that is the body of a handshake record, or `None` when it
/// names none.
pub fn server_name(record_body: &[u8]) -> Result<Option<String>, SniError> {
    let mut r = Reader(record_body);
    if r.u8()? != 1 {
        return Err(SniError::Malformed);
    }
    let len = r.u24()?;
    let mut hello = Reader(r.take(len)?);
    hello.take(2 + 32)?; // version, random
    let n = hello.u8()?;
    hello.take(n)?; // session id
    let n = hello.u16()?;
    hello.take(n)?; // cipher suites
    let n = hello.u8()?;
    hello.take(n)?; // compression methods
    if hello.0.is_empty() {
        return Ok(None);
    }
    let n = hello.u16()?;
    let mut extensions = Reader(hello.take(n)?);
    let mut found = None;
    while !extensions.0.is_empty() {
        let kind = extensions.u16()?;
        let n = extensions.u16()?;
        let data = extensions.take(n)?;
        if kind != 0 {
            continue;
        }
        if found.is_some() {
            return Err(SniError::Malformed);
        }
        let mut list = Reader(data);
        let n = list.u16()?;
        let mut names = Reader(list.take(n)?);
        while !names.0.is_empty() {
            let name_type = names.u8()?;
            let n = names.u16()?;
            let name = names.take(n)?;
            if name_type == 0 {
                if found.is_some() {
                    return Err(SniError::Malformed);
                }
                let name = std::str::from_utf8(name).map_err(|_| SniError::Malformed)?;
                found = Some(name.to_owned());
            }
        }
    }
    Ok(found)
}

/// Whether the ClientHello's name is the host the tunnel was checked for (ASCII case and a
/// trailing dot aside). A tunnel to an address literal must not carry a name at all.
pub fn names_same_host(sni: &str, host: &str) -> bool {
    let norm = |s: &str| s.trim_end_matches('.').to_ascii_lowercase();
    host.parse::<std::net::IpAddr>().is_err() && norm(sni) == norm(host)
}

/// A minimal TLS 1.3 ClientHello record naming `name` (no name when `None`): what a client sends
/// first in a `CONNECT` tunnel. For probes and tests of [`server_name`] and the proxy's check
/// (a name longer than a record can hold is cut to 255 bytes).
pub fn client_hello(name: Option<&str>) -> Vec<u8> {
    let be16 = |n: usize| u16::try_from(n).unwrap_or(u16::MAX).to_be_bytes();
    let mut ext = Vec::new();
    if let Some(name) = name {
        let name = &name.as_bytes()[..name.len().min(255)];
        ext.extend_from_slice(&[0, 0]);
        ext.extend_from_slice(&be16(name.len() + 5));
        ext.extend_from_slice(&be16(name.len() + 3));
        ext.push(0);
        ext.extend_from_slice(&be16(name.len()));
        ext.extend_from_slice(name);
    }
    // supported_versions, to have an extension that is not the name.
    ext.extend_from_slice(&[0, 43, 0, 3, 2, 3, 4]);
    let mut hello = vec![3, 3];
    hello.extend_from_slice(&[7; 32]);
    hello.extend_from_slice(&[0, 0, 2, 0x13, 0x01, 1, 0]);
    hello.extend_from_slice(&be16(ext.len()));
    hello.extend_from_slice(&ext);
    let mut handshake = vec![1];
    handshake.extend_from_slice(&u32::try_from(hello.len()).unwrap_or(0).to_be_bytes()[1..]);
    handshake.extend_from_slice(&hello);
    let mut record = vec![0x16, 3, 1];
    record.extend_from_slice(&be16(handshake.len()));
    record.extend_from_slice(&handshake);
    record
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_name_is_read_from_a_client_hello() {
        let record = client_hello(Some("Allowed.test"));
        let header: [u8; RECORD_HEADER] = record[..RECORD_HEADER].try_into().unwrap();
        assert_eq!(
            handshake_record_len(&header),
            Some(record.len() - RECORD_HEADER)
        );
        let body = &record[RECORD_HEADER..];
        assert_eq!(server_name(body).unwrap().as_deref(), Some("Allowed.test"));
        assert!(names_same_host("Allowed.test", "allowed.test"));
        assert!(names_same_host("allowed.test.", "allowed.test"));
        assert!(!names_same_host("evil.test", "allowed.test"));
        assert!(!names_same_host("127.0.0.1", "127.0.0.1"));
        assert_eq!(
            server_name(&client_hello(None)[RECORD_HEADER..]).unwrap(),
            None
        );
        // A ClientHello cut short (continued in a next record) is refused.
        assert_eq!(
            server_name(&body[..body.len() - 4]),
            Err(SniError::Malformed)
        );
        assert_eq!(handshake_record_len(b"GET /"), None);
    }
}
