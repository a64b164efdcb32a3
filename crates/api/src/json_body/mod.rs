//! A JSON body read into the route's type, every refusal described in our own words.
//!
//! serde's messages quote what the client sent (`invalid type: string "5555…"`), and under
//! `payment` that is a card number. So no text of serde's is ever read or repeated. Reading takes
//! two steps: the bytes become a [`Tree`](tree::Tree), whose only possible errors are JSON syntax
//! (described by category and position); then our own deserializer reads the tree into the
//! route's type with a [`Mistake`](mistake::Mistake) as its error type, which records the kind of
//! mistake, the path to it and what the type asked for, and never the value.

mod mistake;
mod reader;
mod tree;

use serde::de::DeserializeOwned;

pub use mistake::plain_name;

/// A refused body: `param` and `message` of the 400.
pub type Refusal = (String, String);

/// `T` from a JSON text, or what is wrong with it and where.
pub fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Refusal> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let tree = serde::Deserialize::deserialize(&mut de)
        .and_then(|tree| de.end().map(|()| tree))
        .map_err(|err| syntax(&err))?;
    T::deserialize(reader::Reader(tree)).map_err(|mistake| mistake.describe())
}

/// A body that is not JSON, by the category and position `serde_json` reports.
fn syntax(err: &serde_json::Error) -> Refusal {
    let what = match err.classify() {
        serde_json::error::Category::Eof => "the body ends before the JSON value does",
        _ => "it does not follow the JSON grammar",
    };
    (
        "body".to_owned(),
        format!(
            "is not valid JSON: {what} (line {}, column {})",
            err.line(),
            err.column()
        ),
    )
}

#[cfg(test)]
mod tests;
