//! The rule shared by every free-text name.

use crate::Invalid;

/// Trims surrounding whitespace, then requires `min..=max` Unicode scalar values and no control
/// characters. Returns the trimmed text, which is what is stored.
pub(crate) fn bounded_text(
    field: &'static str,
    raw: &str,
    min: usize,
    max: usize,
) -> Result<String, Invalid> {
    let trimmed = raw.trim();
    if trimmed.chars().any(char::is_control) {
        return Err(Invalid::new(field, "must not contain control characters"));
    }
    let n = trimmed.chars().count();
    if n < min || n > max {
        return Err(Invalid::new(
            field,
            format!("must be {min} to {max} characters long (got {n})"),
        ));
    }
    Ok(trimmed.to_owned())
}
