//! `GET /v1/clients/fields/{field}`: one payment field in a page of its own, for the merchant
//! script to frame. The page may be framed only by the origin the script named (its
//! `frame-ancestors`), loads nothing but Holdfast's own script and stylesheet, and talks to
//! nobody but Holdfast (`connect-src 'self'`).

use std::sync::LazyLock;

use actix_web::http::header::{CONTENT_SECURITY_POLICY, ContentType, REFERRER_POLICY};
use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use super::assets::{FIELD_SCRIPT, FIELD_STYLESHEET, RELAY_SCRIPT};
use crate::extract::query;
use holdfast_web::ApiError;

/// The query the merchant script builds for each frame.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct FrameQuery {
    /// Read by the gate; named here so it is not an unknown parameter.
    #[serde(rename = "publicApiKey")]
    _public_api_key: String,
    /// The merchant page's origin: the only one that may frame the field and talk to it.
    origin: Option<String>,
    /// Names the group of frames of one form, so they find each other and nothing else.
    channel: Option<String>,
}

/// A field a frame can hold, or the relay that tokenizes a wallet's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Number,
    Expiry,
    Cvv,
    /// The name on the card, the one optional field.
    Name,
    Relay,
}

impl Field {
    fn parse(name: &str) -> Option<Self> {
        match name {
            "number" => Some(Self::Number),
            "expiry" => Some(Self::Expiry),
            "cvv" => Some(Self::Cvv),
            "name" => Some(Self::Name),
            "relay" => Some(Self::Relay),
            _ => None,
        }
    }

    /// Name, label, `autocomplete` token, `name` attribute (the ones browsers' autofill
    /// recognises), placeholder and longest formatted value.
    fn markup(
        self,
    ) -> (
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
        u8,
    ) {
        match self {
            Self::Number => (
                "number",
                "Card number",
                "cc-number",
                "cardnumber",
                "1234 1234 1234 1234",
                23,
            ),
            Self::Expiry => (
                "expiry",
                "Expiration date",
                "cc-exp",
                "exp-date",
                "MM / YY",
                7,
            ),
            Self::Cvv => ("cvv", "Security code", "cc-csc", "cvc", "CVC", 4),
            // The limit is the server's, in characters a reader counts: the frame checks it; the
            // attribute (UTF-16 units) only stops pasted novels.
            Self::Name => ("name", "Name on card", "cc-name", "ccname", "", 255),
            Self::Relay => ("relay", "Holdfast", "off", "relay", "", 0),
        }
    }
}

/// Serves one field's page; the gate has already checked the public key.
#[utoipa::path(
    get,
    path = "/v1/clients/fields/{field}",
    tag = "hosted client",
    operation_id = "getClientField",
    params(
        ("field" = String, Path, pattern = "^(number|expiry|cvv|name|relay)$", description = "`number`, `expiry`, `cvv`, `name`, or `relay` (no field: it tokenizes a wallet's token for the page)."),
        ("origin" = String, Query, max_length = 255, pattern = "^(https://[a-z0-9]([a-z0-9\\-]*[a-z0-9])?(\\.[a-z0-9]([a-z0-9\\-]*[a-z0-9])?)*|http://(localhost|127\\.0\\.0\\.1|\\[::1\\]))(:([1-9]|[1-79][0-9]|8[1-9]|[1-35-9][0-9]{2}|4[0-35-9][0-9]|44[0-24-9]|[1-9][0-9]{3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?$", description = "The origin of the page that frames the field, as a browser serializes it: `https://host[:port]` in lower case (`http://` for localhost, 127.0.0.1 and [::1] only), at most 255 characters, a port from 1 to 65535 and never the scheme's default (443, 80)."),
        ("channel" = String, Query, pattern = "^[A-Za-z0-9_\\-]{16,64}$", description = "16 to 64 letters, digits, `-` or `_`, the same for every field of one form."),
    ),
    responses((status = 200, description = "The field's page.", content_type = "text/html", body = String)),
)]
pub async fn serve(req: HttpRequest, field: web::Path<String>) -> Result<HttpResponse, ApiError> {
    let field = Field::parse(&field).ok_or(ApiError::NotFound { resource: "field" })?;
    let params: FrameQuery = query(&req)?;
    let origin = params
        .origin
        .ok_or_else(|| ApiError::invalid("origin", "is required"))?;
    if !is_web_origin(&origin) {
        return Err(ApiError::invalid(
            "origin",
            "must be the framing page's origin as a browser writes it: scheme://host[:port] in \
             lower case, without the scheme's default port",
        ));
    }
    let channel = params
        .channel
        .ok_or_else(|| ApiError::invalid("channel", "is required"))?;
    if !is_channel(&channel) {
        return Err(ApiError::invalid(
            "channel",
            "must be 16 to 64 letters, digits, '-' or '_'",
        ));
    }
    Ok(HttpResponse::Ok()
        .content_type(ContentType::html())
        .insert_header((CONTENT_SECURITY_POLICY, policy(&origin)))
        .insert_header((REFERRER_POLICY, "same-origin"))
        .body(rendered(field)))
}

fn policy(origin: &str) -> String {
    format!(
        "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; \
         base-uri 'none'; form-action 'none'; frame-ancestors {origin}"
    )
}

/// Nothing in the page comes from the request: the origin and channel reach the script
/// through `location`, checked there as here.
/// Each field's page, rendered once: nothing in it depends on the request.
#[expect(
    clippy::indexing_slicing,
    reason = "five fields, five pages, indexed by the same match"
)]
fn rendered(field: Field) -> &'static str {
    static PAGES: LazyLock<[String; 5]> = LazyLock::new(|| {
        [
            Field::Number,
            Field::Expiry,
            Field::Cvv,
            Field::Name,
            Field::Relay,
        ]
        .map(page)
    });
    let index = match field {
        Field::Number => 0,
        Field::Expiry => 1,
        Field::Cvv => 2,
        Field::Name => 3,
        Field::Relay => 4,
    };
    &PAGES[index]
}

fn page(field: Field) -> String {
    if field == Field::Relay {
        return format!(
            r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Holdfast</title>
<script src="/hosted/{js}" defer></script>
</head>
<body></body>
</html>
"#,
            js = RELAY_SCRIPT.versioned_name,
        );
    }
    let (name, label, autocomplete, input_name, placeholder, max) = field.markup();
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{label}</title>
<link rel="stylesheet" href="/hosted/{css}">
<script src="/hosted/{js}" defer></script>
</head>
<body data-field="{name}">
<form class="field" novalidate>
<label id="label" for="input">{label}</label>
<input id="input" name="{input_name}" type="text" inputmode="{input_mode}" autocomplete="{autocomplete}" autocorrect="off" spellcheck="false" placeholder="{placeholder}" maxlength="{max}" aria-describedby="error" aria-invalid="false">
<p id="error" class="error" aria-live="polite"></p>
</form>
</body>
</html>
"#,
        css = FIELD_STYLESHEET.versioned_name,
        js = FIELD_SCRIPT.versioned_name,
        input_mode = if field == Field::Name {
            "text"
        } else {
            "numeric"
        },
    )
}

/// `http(s)://host[:port]` as a browser serializes an origin: a lower-case DNS name or IPv4
/// address, or a bracketed IPv6 address, and an optional port. Anything else could carry
/// text into the Content-Security-Policy header.
fn is_web_origin(origin: &str) -> bool {
    // Plain http only on the machine itself (a developer's page): anywhere else the page and
    // its frames could be swapped in transit.
    let rest = match (
        origin.strip_prefix("https://"),
        origin.strip_prefix("http://"),
    ) {
        (Some(rest), _) => rest,
        (None, Some(rest)) if is_loopback(rest) => rest,
        _ => return false,
    };
    if origin.len() > 255 || rest.is_empty() {
        return false;
    }
    // `None` for a bracketed IPv6 host (checked here); the port is `None` when not given.
    let (host, port) = if let Some(v6) = rest.strip_prefix('[') {
        let Some((address, after)) = v6.split_once(']') else {
            return false;
        };
        // As a browser writes it: the address's one canonical spelling.
        if address
            .parse::<std::net::Ipv6Addr>()
            .map_or(true, |parsed| parsed.to_string() != address)
        {
            return false;
        }
        if after.is_empty() {
            (None, None)
        } else if let Some(port) = after.strip_prefix(':') {
            (None, Some(port))
        } else {
            return false;
        }
    } else {
        match rest.split_once(':') {
            Some((host, port)) => (Some(host), Some(port)),
            None => (Some(rest), None),
        }
    };
    let host_ok = host.is_none_or(|host| {
        !host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty()
                    && !label.starts_with('-')
                    && !label.ends_with('-')
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            })
    });
    // A browser leaves the scheme's default port out of the origin it serializes.
    let default_port = if origin.starts_with("https://") {
        "443"
    } else {
        "80"
    };
    let port_ok = port.is_none_or(|port| {
        (1..=5).contains(&port.len())
            && !port.starts_with('0')
            && port.bytes().all(|b| b.is_ascii_digit())
            && port.parse::<u16>().is_ok()
            && port != default_port
    });
    host_ok && port_ok
}

/// `localhost`, `127.0.0.1` or `[::1]`, with or without a port.
fn is_loopback(host_and_port: &str) -> bool {
    let host = if host_and_port.starts_with('[') {
        host_and_port
            .split_inclusive(']')
            .next()
            .unwrap_or_default()
    } else {
        host_and_port.split(':').next().unwrap_or_default()
    };
    matches!(host, "localhost" | "127.0.0.1" | "[::1]")
}

fn is_channel(channel: &str) -> bool {
    (16..=64).contains(&channel.len())
        && channel
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_serialized_origin_is_taken() {
        let cases = [
            ("https://shop.example", true),
            ("http://localhost:3000", true),
            ("http://127.0.0.1:8080", true),
            ("http://[::1]:8080", true),
            ("http://shop.example", false),
            ("http://localhost.evil.example", false),
            ("http://127.0.0.2", false),
            ("https://[::1]:8443", true),
            ("https://[::1]", true),
            ("https://xn--bcher-kva.example", true),
            ("https://Shop.example", false),
            ("https://shop.example/", false),
            ("https://shop.example/path", false),
            ("https://shop.example:0", false),
            ("https://shop.example:65536", false),
            ("https://shop.example:080", false),
            ("https://shop.example:", false),
            ("https://", false),
            ("ftp://shop.example", false),
            ("https://shop..example", false),
            ("https://-shop.example", false),
            ("https://shop.example; script-src *", false),
            ("https://shop.example\r\nx: y", false),
            ("https://*.example", false),
            ("https://user@shop.example", false),
            ("https://[::1", false),
            ("https://[::1]x", false),
            ("https://[g::1]", false),
            ("https://shop.example:443", false),
            ("https://shop.example:8443", true),
            ("https://shop.example:80", true),
            ("http://localhost:80", false),
            ("http://[::1]:80", false),
            ("https://[0:0:0:0:0:0:0:1]", false),
            ("https://[::0001]", false),
            ("https://[::FFFF:1.2.3.4]", false),
            ("https://[::ffff:1.2.3.4]", true),
            ("'self'", false),
            ("*", false),
        ];
        for (origin, ok) in cases {
            assert_eq!(is_web_origin(origin), ok, "{origin}");
        }
        assert!(!is_web_origin(&format!(
            "https://{}.example",
            "a".repeat(250)
        )));
    }

    #[test]
    fn a_channel_is_a_plain_token() {
        let cases = [
            ("abcdefghijklmnop", true),
            ("A1_-A1_-A1_-A1_-", true),
            ("abcdefghijklmno", false),
            ("abcdefghijklmnop!", false),
            ("abcdefghijklmnop ", false),
        ];
        for (channel, ok) in cases {
            assert_eq!(is_channel(channel), ok, "{channel}");
        }
        assert!(is_channel(&"a".repeat(64)));
        assert!(!is_channel(&"a".repeat(65)));
    }

    #[test]
    fn every_field_page_is_labelled_and_autofillable() {
        for (name, autocomplete) in [
            ("number", "cc-number"),
            ("expiry", "cc-exp"),
            ("cvv", "cc-csc"),
            ("name", "cc-name"),
        ] {
            let html = page(Field::parse(name).unwrap());
            let mode = if name == "name" { "text" } else { "numeric" };
            assert!(html.contains(&format!("inputmode=\"{mode}\"")), "{name}");
            assert!(
                html.contains(&format!("autocomplete=\"{autocomplete}\"")),
                "{name}"
            );
            assert!(
                html.contains("<label id=\"label\" for=\"input\">"),
                "{name}"
            );
            assert!(html.contains("aria-describedby=\"error\""), "{name}");
            assert!(!html.contains("style="), "{name}: no inline style");
            assert!(!html.contains("<script>"), "{name}: no inline script");
        }
    }
}
