//! Turns an `OutgoingEmail` into a complete RFC 5322 message.

use holdfast_domain::ports::{MailError, OutgoingEmail};
use lettre::Message;
use lettre::message::Mailbox;
use lettre::message::header::ContentType;

/// A message ready to send, with the id that also names it on disk.
#[derive(Debug)]
pub(crate) struct Composed {
    pub id: String,
    pub message: Message,
}

/// Parses one address as given in configuration or in an email's `to`.
pub(crate) fn parse_mailbox(text: &str) -> Result<Mailbox, String> {
    let mailbox: Mailbox = text.trim().parse().map_err(|e| format!("{e}"))?;
    // lettre's parser stops after the first mailbox and drops the rest, so a list or trailing
    // text would silently lose recipients: anything but exactly one mailbox is refused.
    let reparsed: Result<lettre::message::Mailboxes, _> = text.trim().parse();
    match reparsed {
        Ok(all) if all.iter().count() == 1 => Ok(mailbox),
        _ => Err("expected exactly one address".to_owned()),
    }
}

/// `id` (the outbox's) becomes the Message-ID's left part and the file name: letters, digits,
/// `_` and `-` are kept, anything else is dropped, so it is always a valid `id-left`.
pub(crate) fn compose(
    from: &Mailbox,
    id: &str,
    email: &OutgoingEmail,
) -> Result<Composed, MailError> {
    let to = parse_mailbox(&email.to).map_err(|why| {
        MailError::Permanent(format!(
            "recipient address {:?} is not valid: {why}",
            email.to
        ))
    })?;
    let id: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    let message = Message::builder()
        .from(from.clone())
        .to(to)
        .subject(email.subject.as_str())
        .date_now()
        .message_id(Some(format!("<{id}@{}>", from.email.domain())))
        .header(ContentType::TEXT_PLAIN)
        .body(email.body.clone())
        .map_err(|e| MailError::Permanent(format!("the message cannot be built: {e}")))?;
    Ok(Composed { id, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn email(to: &str, subject: &str, body: &str) -> OutgoingEmail {
        OutgoingEmail {
            to: to.to_owned(),
            subject: subject.to_owned(),
            body: body.to_owned(),
        }
    }

    fn sender() -> Mailbox {
        parse_mailbox("Holdfast <noreply@holdfast.test>").unwrap()
    }

    fn formatted(email: &OutgoingEmail) -> String {
        let composed = compose(&sender(), "eml_1", email).unwrap();
        String::from_utf8(composed.message.formatted()).unwrap()
    }

    #[test]
    fn the_message_id_is_the_outbox_id() {
        let email = email("ana@shop.test", "Receipt", "Paid.");
        let once = String::from_utf8(
            compose(&sender(), "eml_01ABC", &email)
                .unwrap()
                .message
                .formatted(),
        )
        .unwrap();
        assert!(
            once.contains("Message-ID: <eml_01ABC@holdfast.test>"),
            "{once}"
        );
        let hostile = compose(&sender(), "a>b@c\r\nX: y", &email).unwrap();
        assert_eq!(hostile.id, "abcXy");
    }

    #[test]
    fn has_the_required_headers() {
        let text = formatted(&email("ana@shop.test", "Receipt", "Paid."));
        let headers = text.split("\r\n\r\n").next().unwrap();
        for name in [
            "From: ",
            "To: ",
            "Subject: Receipt",
            "Date: ",
            "Message-ID: <",
            "Content-Type: text/plain; charset=utf-8",
        ] {
            assert!(
                headers.lines().any(|line| line.starts_with(name)),
                "{name} missing in:\n{headers}"
            );
        }
        assert!(headers.contains("@holdfast.test>"), "{headers}");
        assert!(text.ends_with("Paid."), "{text}");
    }

    #[test]
    fn a_bad_recipient_is_permanent() {
        for to in ["", "not an address", "a@b.test, c@d.test", "a@b.test junk"] {
            let result = compose(&sender(), "eml_1", &email(to, "s", "b"));
            assert!(
                matches!(result, Err(MailError::Permanent(_))),
                "{to:?}: {result:?}"
            );
        }
    }

    #[test]
    fn a_named_recipient_is_accepted() {
        let text = formatted(&email("Ana Lima <ana@shop.test>", "s", "b"));
        assert!(text.contains("To: \"Ana Lima\" <ana@shop.test>"), "{text}");
    }

    #[test]
    fn a_line_break_in_the_subject_adds_no_header() {
        let text = formatted(&email("ana@shop.test", "Hi\r\nBcc: eve@evil.test", "b"));
        assert!(!text.lines().any(|line| line.starts_with("Bcc:")), "{text}");
    }
}
