//! The second step: a [`Tree`] read into the route's type by a deserializer whose error is a
//! [`Mistake`], so every failure is described from data, never from text.

use std::collections::HashSet;

use serde::de::value::StrDeserializer;
use serde::de::{
    DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

use super::mistake::{Kind, Mistake, Segment};
use super::tree::Tree;

const A_STRING: &str = "a string";
const A_WHOLE_NUMBER: &str = "a whole number within range";

/// A value of the tree, to be read as whatever the route's type asks for.
pub struct Reader(pub Tree);

impl Reader {
    /// Reads the value, naming what the type asked for in a mistake about it.
    fn wanting<'de, V: Visitor<'de>>(
        self,
        what: &'static str,
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        self.deserialize_any(visitor).map_err(|m| m.wanting(what))
    }
}

macro_rules! wanting {
    ($($method:ident => $what:expr),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
                self.wanting($what, visitor)
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Reader {
    type Error = Mistake;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        match self.0 {
            Tree::Null => visitor.visit_unit(),
            Tree::Bool(v) => visitor.visit_bool(v),
            Tree::Unsigned(v) => visitor.visit_u64(v),
            Tree::Signed(v) => visitor.visit_i64(v),
            Tree::Float(v) => visitor.visit_f64(v),
            Tree::String(v) => visitor.visit_string(v),
            Tree::Array(items) => {
                let len = items.len();
                let mut seq = Items {
                    items: items.into_iter().enumerate(),
                };
                let value = visitor.visit_seq(&mut seq)?;
                if seq.items.len() > 0 {
                    return Err(serde::de::Error::invalid_length(len, &"fewer elements"));
                }
                Ok(value)
            }
            Tree::Object(entries) => {
                if let Some(key) = repeated_key(&entries) {
                    return Err(Mistake::new(Kind::Repeated).within(Segment::key(key)));
                }
                visitor.visit_map(Entries {
                    entries: entries.into_iter(),
                    current: None,
                })
            }
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        match self.0 {
            Tree::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        visitor.visit_newtype_struct(self)
    }

    /// Only unit variants, spelt as strings, are taken in a body.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        match self.0 {
            Tree::String(name) => visitor.visit_enum(Variant(name)),
            _ => Err(Mistake::new(Kind::NotOneOf(variants))),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Mistake> {
        visitor.visit_unit()
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        // serde's derived structs also take an array, field by field; a body never does.
        if matches!(self.0, Tree::Array(_)) {
            return Err(Mistake::new(Kind::WrongType {
                sent: "an array",
                wanted: Some("an object"),
            }));
        }
        self.wanting("an object", visitor)
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _: usize, visitor: V) -> Result<V::Value, Mistake> {
        self.wanting("an array", visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        _: usize,
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        self.wanting("an array", visitor)
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _: &'static str,
        visitor: V,
    ) -> Result<V::Value, Mistake> {
        self.wanting("null", visitor)
    }

    wanting! {
        deserialize_bool => "true or false",
        deserialize_i8 => A_WHOLE_NUMBER,
        deserialize_i16 => A_WHOLE_NUMBER,
        deserialize_i32 => A_WHOLE_NUMBER,
        deserialize_i64 => A_WHOLE_NUMBER,
        deserialize_i128 => A_WHOLE_NUMBER,
        deserialize_u8 => A_WHOLE_NUMBER,
        deserialize_u16 => A_WHOLE_NUMBER,
        deserialize_u32 => A_WHOLE_NUMBER,
        deserialize_u64 => A_WHOLE_NUMBER,
        deserialize_u128 => A_WHOLE_NUMBER,
        deserialize_f32 => "a number",
        deserialize_f64 => "a number",
        deserialize_char => "a single character",
        deserialize_str => A_STRING,
        deserialize_string => A_STRING,
        deserialize_bytes => A_STRING,
        deserialize_byte_buf => A_STRING,
        deserialize_identifier => A_STRING,
        deserialize_unit => "null",
        deserialize_seq => "an array",
        deserialize_map => "an object",
    }
}

/// The first key an object gives twice. Small objects, the common case, are compared pairwise;
/// a large one goes through a set, so a body of many keys costs linear time.
fn repeated_key(entries: &[(String, Tree)]) -> Option<&str> {
    if entries.len() <= 8 {
        return entries.iter().enumerate().find_map(|(i, (key, _))| {
            entries
                .get(..i)
                .unwrap_or_default()
                .iter()
                .any(|(earlier, _)| earlier == key)
                .then_some(key.as_str())
        });
    }
    let mut seen = HashSet::with_capacity(entries.len());
    entries
        .iter()
        .map(|(key, _)| key.as_str())
        .find(|key| !seen.insert(*key))
}

struct Items {
    items: std::iter::Enumerate<std::vec::IntoIter<Tree>>,
}

impl<'de> SeqAccess<'de> for Items {
    type Error = Mistake;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Mistake> {
        self.items
            .next()
            .map(|(index, item)| {
                seed.deserialize(Reader(item))
                    .map_err(|m| m.within(Segment::Index(index)))
            })
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Entries {
    entries: std::vec::IntoIter<(String, Tree)>,
    /// The key just read and its value, waiting for `next_value_seed`.
    current: Option<(String, Tree)>,
}

impl<'de> MapAccess<'de> for Entries {
    type Error = Mistake;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Mistake> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        let read = seed
            .deserialize(StrDeserializer::<Mistake>::new(&key))
            .map_err(|m| m.within(Segment::key(&key)))?;
        self.current = Some((key, value));
        Ok(Some(read))
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, Mistake> {
        let (key, value) = self
            .current
            .take()
            .ok_or_else(|| Mistake::new(Kind::Other))?;
        seed.deserialize(Reader(value))
            .map_err(|m| m.within(Segment::key(&key)))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

/// A unit variant named by a string.
struct Variant(String);

impl<'de> EnumAccess<'de> for Variant {
    type Error = Mistake;
    type Variant = UnitVariant;

    fn variant_seed<V: DeserializeSeed<'de>>(
        self,
        seed: V,
    ) -> Result<(V::Value, UnitVariant), Mistake> {
        let name = seed.deserialize(StrDeserializer::<Mistake>::new(&self.0))?;
        Ok((name, UnitVariant))
    }
}

/// A variant without data: one that wants data was not sent any.
struct UnitVariant;

impl<'de> VariantAccess<'de> for UnitVariant {
    type Error = Mistake;

    fn unit_variant(self) -> Result<(), Mistake> {
        Ok(())
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, _: T) -> Result<T::Value, Mistake> {
        Err(Mistake::new(Kind::WrongType {
            sent: "a string",
            wanted: Some("an object"),
        }))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Mistake> {
        Err(Mistake::new(Kind::WrongType {
            sent: "a string",
            wanted: Some("an array"),
        }))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _: &'static [&'static str],
        _: V,
    ) -> Result<V::Value, Mistake> {
        Err(Mistake::new(Kind::WrongType {
            sent: "a string",
            wanted: Some("an object"),
        }))
    }
}
