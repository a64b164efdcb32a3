//! BER to DER, as far as Apple's signatures need it. Apple's `signature` is a CMS message in BER
//! with indefinite lengths (`30 80 … 00 00`), which a DER parser refuses; the certificates and
//! signed attributes inside are DER already (they are what was signed). This rewrites every
//! length in its definite, shortest form and changes nothing else.

/// Deeper than any CMS message nests; a hostile input cannot recurse past it.
const MAX_DEPTH: usize = 32;

/// `input` (one BER element, nothing after it) with every length definite; `None` if it is not
/// well-formed BER.
pub(super) fn to_der(input: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(input.len());
    let rest = element(input, &mut out, 0)?;
    rest.is_empty().then_some(out)
}

/// Copies one element of `input` to `out` with definite lengths; returns what follows it.
fn element<'a>(input: &'a [u8], out: &mut Vec<u8>, depth: usize) -> Option<&'a [u8]> {
    if depth > MAX_DEPTH {
        return None;
    }
    let (&first, mut rest) = input.split_first()?;
    let tag_start = out.len();
    out.push(first);
    if first & 0x1f == 0x1f {
        // A high tag number: base-128 bytes, the last without its top bit.
        loop {
            let (&byte, after) = rest.split_first()?;
            out.push(byte);
            rest = after;
            if byte & 0x80 == 0 {
                break;
            }
            if out.len().saturating_sub(tag_start) > 5 {
                return None;
            }
        }
    }
    let tag = out.split_off(tag_start);
    let constructed = first & 0x20 != 0;
    let (&length, after) = rest.split_first()?;
    rest = after;
    let mut content = Vec::new();
    if length == 0x80 {
        // Indefinite: the children run up to an end-of-contents (00 00).
        if !constructed {
            return None;
        }
        loop {
            if let Some(after) = rest.strip_prefix(&[0, 0]) {
                rest = after;
                break;
            }
            rest = element(rest, &mut content, depth.saturating_add(1))?;
        }
    } else {
        let size = if length & 0x80 == 0 {
            usize::from(length)
        } else {
            let count = usize::from(length & 0x7f);
            if count == 0 || count > 4 {
                return None;
            }
            let (bytes, after) = rest.split_at_checked(count)?;
            rest = after;
            bytes.iter().try_fold(0usize, |size, &b| {
                size.checked_mul(256)
                    .map(|shifted| shifted | usize::from(b))
            })?
        };
        let (body, after) = rest.split_at_checked(size)?;
        rest = after;
        if constructed {
            let mut inner = body;
            while !inner.is_empty() {
                inner = element(inner, &mut content, depth.saturating_add(1))?;
            }
        } else {
            content.extend_from_slice(body);
        }
    }
    out.extend_from_slice(&tag);
    push_length(out, content.len());
    out.extend_from_slice(&content);
    Some(rest)
}

fn push_length(out: &mut Vec<u8>, length: usize) {
    if length < 0x80 {
        out.push(u8::try_from(length).unwrap_or_default());
        return;
    }
    let bytes = length.to_be_bytes();
    let skip = bytes.iter().take_while(|&&b| b == 0).count();
    out.push(0x80 | u8::try_from(bytes.len().saturating_sub(skip)).unwrap_or_default());
    out.extend_from_slice(bytes.get(skip..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indefinite_lengths_become_definite_and_der_stays_as_it_is() {
        let cases: [(&[u8], Option<&[u8]>); 8] = [
            // SEQUENCE { INTEGER 1 } in DER: unchanged.
            (
                &[0x30, 0x03, 0x02, 0x01, 0x01],
                Some(&[0x30, 0x03, 0x02, 0x01, 0x01]),
            ),
            // The same with an indefinite length.
            (
                &[0x30, 0x80, 0x02, 0x01, 0x01, 0x00, 0x00],
                Some(&[0x30, 0x03, 0x02, 0x01, 0x01]),
            ),
            // Nested, with a context tag ([0] EXPLICIT) as CMS has.
            (
                &[0x30, 0x80, 0xa0, 0x80, 0x05, 0x00, 0x00, 0x00, 0x00, 0x00],
                Some(&[0x30, 0x04, 0xa0, 0x02, 0x05, 0x00]),
            ),
            // A long-form length that was not the shortest.
            (&[0x04, 0x81, 0x01, 0xff], Some(&[0x04, 0x01, 0xff])),
            // Refused: an indefinite primitive, a missing end-of-contents, a truncated body,
            // something after the element.
            (&[0x04, 0x80, 0x00, 0x00], None),
            (&[0x30, 0x80, 0x02, 0x01, 0x01], None),
            (&[0x30, 0x05, 0x02, 0x01], None),
            (&[0x05, 0x00, 0x05], None),
        ];
        for (ber, der) in cases {
            assert_eq!(to_der(ber).as_deref(), der, "{ber:02x?}");
        }
        let long = [vec![0x04, 0x82, 0x01, 0x00], vec![7; 256]].concat();
        assert_eq!(to_der(&long), Some(long.clone()), "a two-byte length stays");
        let deep = [[0x30, 0x80].repeat(40), vec![0; 80]].concat();
        assert_eq!(to_der(&deep), None, "nesting is bounded");
    }
}
