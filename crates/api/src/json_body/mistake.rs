//! What was wrong with a body, recorded as data: never a value the client sent.
//!
//! This is the error type of the second step's deserializer, so the route types' derived code
//! reports through it: serde hands over the sent value (`Unexpected::Str("5555…")`) and we keep
//! only its kind. Field names come from our types (`&'static str`); a key the client wrote is
//! kept only when it is a plain name, which no card number, tax id or bank number can be.

use std::fmt;

use serde::de::{self, Expected, Unexpected};

/// One step of the path from the body to the value at fault.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    /// A key that is a plain name.
    Key(String),
    /// A key that is not safe to repeat.
    Hidden,
    Index(usize),
}

impl Segment {
    pub fn key(key: &str) -> Self {
        if plain_name(key) {
            Self::Key(key.to_owned())
        } else {
            Self::Hidden
        }
    }
}

/// A name safe to repeat: 1 to 40 ASCII letters and underscores.
pub fn plain_name(name: &str) -> bool {
    (1..=40).contains(&name.len()) && name.bytes().all(|b| b.is_ascii_alphabetic() || b == b'_')
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Missing(&'static str),
    /// A key the route's type does not take; the key itself ends the path.
    Unknown,
    /// A key given twice; the key ends the path.
    Repeated,
    WrongType {
        sent: &'static str,
        wanted: Option<&'static str>,
    },
    OutOfRange {
        wanted: Option<&'static str>,
    },
    Length,
    NotOneOf(&'static [&'static str]),
    Other,
}

/// A body that does not fit the route's type, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mistake {
    /// Innermost segment first: segments are added as the error leaves each level.
    path: Vec<Segment>,
    kind: Kind,
}

impl Mistake {
    pub fn new(kind: Kind) -> Self {
        Self {
            path: Vec::new(),
            kind,
        }
    }

    /// The same mistake, one level further out.
    #[must_use]
    pub fn within(mut self, segment: Segment) -> Self {
        self.path.push(segment);
        self
    }

    /// What the value's place asked for, known to the deserializer method the type called. Only
    /// a mistake about this very value (no path yet) takes it.
    #[must_use]
    pub fn wanting(mut self, what: &'static str) -> Self {
        if self.path.is_empty()
            && let Kind::WrongType { wanted, .. } | Kind::OutOfRange { wanted } = &mut self.kind
        {
            wanted.get_or_insert(what);
        }
        self
    }

    /// `param` and `message` of the 400.
    pub fn describe(&self) -> (String, String) {
        let outer_first: Vec<&Segment> = self.path.iter().rev().collect();
        let param = |segments: &[&Segment]| {
            if segments.is_empty() {
                return "body".to_owned();
            }
            segments
                .iter()
                .map(|s| match s {
                    Segment::Key(k) => k.clone(),
                    Segment::Hidden => "*".to_owned(),
                    Segment::Index(i) => i.to_string(),
                })
                .collect::<Vec<_>>()
                .join(".")
        };
        let here = param(&outer_first);
        match &self.kind {
            Kind::Missing(field) => {
                let field = (*field).to_owned();
                let at = if outer_first.is_empty() {
                    field
                } else {
                    format!("{here}.{field}")
                };
                (at, "is required".to_owned())
            }
            Kind::Unknown | Kind::Repeated => {
                let (named, plural) = match self.kind {
                    Kind::Unknown => ("is not a known field", "contains a field that is not known"),
                    _ => ("is given more than once", "names a field more than once"),
                };
                match outer_first.split_last() {
                    Some((Segment::Key(_), _)) => (here, named.to_owned()),
                    Some((_, parent)) => (param(parent), plural.to_owned()),
                    None => ("body".to_owned(), plural.to_owned()),
                }
            }
            Kind::WrongType { sent, wanted } => {
                let wanted = wanted.unwrap_or("of another type");
                (here, format!("must be {wanted}, not {sent}"))
            }
            Kind::OutOfRange { wanted } => (
                here,
                format!("must be {}", wanted.unwrap_or("another value")),
            ),
            Kind::Length => (here, "has the wrong number of elements".to_owned()),
            Kind::NotOneOf(names) => (here, format!("must be one of {}", names.join(", "))),
            Kind::Other => (here, "is not valid here".to_owned()),
        }
    }
}

impl fmt::Display for Mistake {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (param, message) = self.describe();
        write!(f, "{param}: {message}")
    }
}

impl std::error::Error for Mistake {}

impl de::Error for Mistake {
    /// Free text from a `Deserialize` impl may quote the value, so it is never kept.
    fn custom<T: fmt::Display>(_: T) -> Self {
        Self::new(Kind::Other)
    }

    fn invalid_type(sent: Unexpected<'_>, _: &dyn Expected) -> Self {
        Self::new(Kind::WrongType {
            sent: kind_of(&sent),
            wanted: None,
        })
    }

    fn invalid_value(_: Unexpected<'_>, _: &dyn Expected) -> Self {
        Self::new(Kind::OutOfRange { wanted: None })
    }

    fn invalid_length(_: usize, _: &dyn Expected) -> Self {
        Self::new(Kind::Length)
    }

    fn unknown_variant(_: &str, expected: &'static [&'static str]) -> Self {
        Self::new(Kind::NotOneOf(expected))
    }

    fn unknown_field(_: &str, _: &'static [&'static str]) -> Self {
        Self::new(Kind::Unknown)
    }

    fn missing_field(field: &'static str) -> Self {
        Self::new(Kind::Missing(field))
    }

    fn duplicate_field(field: &'static str) -> Self {
        Self::new(Kind::Repeated).within(Segment::key(field))
    }
}

/// The kind of a sent value, in our words.
fn kind_of(sent: &Unexpected<'_>) -> &'static str {
    match sent {
        Unexpected::Bool(_) => "true or false",
        Unexpected::Unsigned(_) | Unexpected::Signed(_) | Unexpected::Float(_) => "a number",
        Unexpected::Char(_) | Unexpected::Str(_) => "a string",
        Unexpected::Bytes(_) => "bytes",
        Unexpected::Unit | Unexpected::Option => "null",
        Unexpected::Seq => "an array",
        Unexpected::Map => "an object",
        _ => "another kind of value",
    }
}
