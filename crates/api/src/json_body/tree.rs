//! The first step: bytes to a tree of JSON values, keeping every key as sent.
//!
//! `serde_json`'s parser does the work; its errors are used only for their category (syntax or
//! early end) and position, which hold nothing the client sent. Objects keep their entries in a
//! list, duplicates included, so the second step can refuse a key given twice instead of
//! silently keeping the last.

use std::fmt;

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};

/// A parsed JSON value.
#[derive(Debug, PartialEq)]
pub enum Tree {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    String(String),
    Array(Vec<Tree>),
    Object(Vec<(String, Tree)>),
}

impl<'de> Deserialize<'de> for Tree {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(TreeVisitor)
    }
}

struct TreeVisitor;

impl<'de> Visitor<'de> for TreeVisitor {
    type Value = Tree;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Tree, E> {
        Ok(Tree::Null)
    }

    fn visit_bool<E>(self, v: bool) -> Result<Tree, E> {
        Ok(Tree::Bool(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Tree, E> {
        Ok(Tree::Unsigned(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Tree, E> {
        Ok(Tree::Signed(v))
    }

    /// JSON Schema's `integer` is any number without a fractional part, so `3.0` and `1e3` are
    /// the integers the document says a field takes; they are read as such.
    #[expect(
        clippy::cast_possible_truncation,
        reason = "integral and within ±2^63, so the cast is exact"
    )]
    fn visit_f64<E>(self, v: f64) -> Result<Tree, E> {
        const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
        if v.fract() == 0.0 && (-LIMIT..LIMIT).contains(&v) {
            return Ok(Tree::Signed(v as i64));
        }
        Ok(Tree::Float(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Tree, E> {
        Ok(Tree::String(v.to_owned()))
    }

    fn visit_string<E>(self, v: String) -> Result<Tree, E> {
        Ok(Tree::String(v))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tree, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(64));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Tree::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tree, A::Error> {
        let mut entries = Vec::with_capacity(map.size_hint().unwrap_or(0).min(64));
        while let Some(entry) = map.next_entry::<String, Tree>()? {
            entries.push(entry);
        }
        Ok(Tree::Object(entries))
    }
}
