//! The frame every page shares: landmarks, the navigation, the Test/Live switch and sign-out.

use holdfast_domain::mode::Mode;
use maud::{DOCTYPE, Markup, html};

use super::auth::Signed;

/// The pages in the navigation: (path, label as the spec names it).
const NAVIGATION: &[(&str, &str)] = &[
    ("/dashboard/keys", "API Keys"),
    ("/dashboard/transactions", "Transaction Log"),
    ("/dashboard/merchants", "Merchants"),
    ("/dashboard/money", "Money"),
    ("/dashboard/loans", "Loans"),
    ("/dashboard/boarding", "Boarding"),
    ("/dashboard/processors", "Processors"),
    ("/dashboard/settings/webhooks", "Settings › Webhooks"),
    ("/dashboard/audit", "Audit Log"),
];

/// An instant as people read it, to the minute in UTC, with the exact time for machines.
pub fn when(at: time::OffsetDateTime) -> Markup {
    let at = at.to_offset(time::UtcOffset::UTC);
    let shown = format!(
        "{}-{:02}-{:02} {:02}:{:02} UTC",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute()
    );
    html! { time datetime=(holdfast_domain::payment::transaction::format_timestamp(at)) { (shown) } }
}

/// An object's metadata as a term of its description list; nothing when it has none.
pub fn metadata_term(metadata: &holdfast_domain::metadata::Metadata) -> Markup {
    html! {
        @if !metadata.is_empty() {
            dt { "Metadata" } dd { ul { @for (k, v) in metadata.entries() { li { code { (k) } ": " (v) } } } }
        }
    }
}

/// What a page says after a change, looked up by the word its redirect carries (never the
/// request's own text): `notices` pairs each word with its sentence.
pub fn notice(query: &str, notices: &[(&str, &'static str)]) -> Option<&'static str> {
    notices
        .iter()
        .find(|(word, _)| *word == query)
        .map(|(_, sentence)| *sentence)
}

/// A form's refusal and the field it names, in the form's own words: `labels` pairs the API
/// name of each field (a dotted path counts as its head) with the form's label.
#[derive(Debug, Clone, Copy)]
pub struct FormError<'a> {
    pub error: &'a holdfast_domain::Invalid,
    pub labels: &'a [(&'static str, &'static str)],
}

impl FormError<'_> {
    const ID: &'static str = "form-error";

    fn names(&self, field: &str) -> bool {
        let named = self.error.field;
        named == field
            || named
                .strip_prefix(field)
                .is_some_and(|rest| rest.starts_with('.'))
    }

    /// The alert above the form: the field's label, then the rule it broke.
    pub fn alert(&self) -> Markup {
        let label = self
            .labels
            .iter()
            .find(|(field, _)| self.names(field))
            .map_or("The form", |(_, label)| *label);
        html! { p.error #(Self::ID) role="alert" { (label) ": " (self.error.message) "." } }
    }

    /// The `aria-describedby` of the input for `field`: the alert, when it names that field.
    pub fn describes(error: Option<&Self>, field: &str) -> Option<&'static str> {
        error.filter(|e| e.names(field)).map(|_| Self::ID)
    }
}

/// A confirmation before something permanent: what it is, what follows, one button that does
/// it, and the way back.
#[derive(Debug)]
pub struct Confirmation<'a> {
    pub title: &'a str,
    pub question: String,
    pub consequence: Markup,
    pub action: String,
    pub button: String,
    pub back: String,
}

/// The page a `Confirmation` is.
pub fn confirmation(signed: &Signed, current: &str, c: &Confirmation<'_>) -> Markup {
    let body = html! {
        h1 { (c.question) }
        p { (c.consequence) }
        form.stack method="post" action=(c.action) {
            input type="hidden" name="csrf" value=(signed.csrf);
            button.danger type="submit" { (c.button) }
        }
        p { a href=(c.back) { "Keep it and go back" } }
    };
    page(signed, c.title, current, &body)
}

/// `path` if it is a page of the navigation: where a form may send the browser back to.
pub fn known_page(path: &str) -> Option<&'static str> {
    NAVIGATION
        .iter()
        .map(|(known, _)| *known)
        .find(|known| *known == path)
}

fn document(title: &str, mode: Option<Mode>, header: &Markup, body: &Markup) -> Markup {
    titled(&format!("{title} · Holdfast dashboard"), mode, header, body)
}

/// A hosted page of Holdfast's outside the dashboard (a merchant's boarding form): the
/// dashboard's stylesheet, its own title, no navigation.
pub fn hosted(title: &str, body: &Markup) -> Markup {
    let header = html! {
        header.top { p.brand { "Holdfast" } }
    };
    titled(&format!("{title} · Holdfast"), None, &header, body)
}

fn titled(title: &str, mode: Option<Mode>, header: &Markup, body: &Markup) -> Markup {
    let class = match mode {
        Some(Mode::Live) => "live",
        _ => "test",
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) }
                link rel="stylesheet" href="/dashboard/assets/dashboard.css";
                script src="/dashboard/assets/dashboard.js" defer {}
            }
            body class=(class) {
                a.skip href="#main" { "Skip to content" }
                (header)
                main #main tabindex="-1" { (body) }
            }
        }
    }
}

/// A page for someone not signed in (sign-in, setting a password, refusals).
pub fn bare(title: &str, body: &Markup) -> Markup {
    let header = html! {
        header.top { p.brand { "Holdfast" } }
    };
    document(title, None, &header, body)
}

/// A page of the signed-in dashboard; `current` is the navigation entry it belongs to.
pub fn page(signed: &Signed, title: &str, current: &str, body: &Markup) -> Markup {
    let mode = signed.who.session.mode;
    let user = &signed.who.user;
    let header = html! {
        header.top {
            p.brand { "Holdfast" }
            nav aria-label="Dashboard" {
                ul {
                    @for (path, label) in NAVIGATION {
                        li {
                            @if *path == current {
                                a href=(path) aria-current="page" { (label) }
                            } @else {
                                a href=(path) { (label) }
                            }
                        }
                    }
                }
            }
            form.mode method="post" action="/dashboard/mode" {
                input type="hidden" name="csrf" value=(signed.csrf);
                input type="hidden" name="back" value=(current);
                fieldset {
                    legend { "Mode" }
                    @for (value, label) in [(Mode::Test, "Test"), (Mode::Live, "Live")] {
                        button type="submit" name="mode" value=(value.as_str())
                            aria-pressed=(if value == mode { "true" } else { "false" }) { (label) }
                    }
                }
            }
            form.account method="post" action="/dashboard/sign-out" {
                input type="hidden" name="csrf" value=(signed.csrf);
                span { (user.email.as_str()) " (" (user.role) ")" }
                a href="/dashboard/platforms" { "Switch platform" }
                button.secondary type="submit" { "Sign out" }
            }
        }
        p.banner role="status" {
            @match mode {
                Mode::Test => "Test mode: everything shown and created here is test data.",
                Mode::Live => "Live mode: real keys and real payments.",
            }
        }
    };
    document(title, Some(mode), &header, body)
}
