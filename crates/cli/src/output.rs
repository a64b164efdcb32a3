//! What the operator commands print: JSON with `--json`, short human lines otherwise.

use std::io::Write;

use holdfast_domain::api_key::ApiKey;
use holdfast_domain::services::CreatedKey;
use holdfast_domain::user::User;
use serde_json::{Value, json};

use holdfast_domain::payment::transaction::format_timestamp as rfc3339;

/// Writes to standard output; a closed pipe (`holdfast … | head`) is not an error worth a panic.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{text}");
}

pub fn emit(json_mode: bool, value: &impl serde::Serialize, human: impl FnOnce() -> String) {
    if json_mode {
        // Our views are plain data; one that would not serialize prints nothing rather than
        // stopping the command halfway.
        print(&serde_json::to_string_pretty(value).unwrap_or_default());
    } else {
        print(&human());
    }
}

pub fn key_json(key: &ApiKey) -> Value {
    json!({
        "id": key.id,
        "name": key.name.as_str(),
        "type": key.key_type,
        "mode": key.mode,
        "active": key.is_active(),
        "last4": key.last4,
        "createdBy": key.created_by,
        "createdOn": rfc3339(key.created_on),
        "lastUsedOn": key.last_used_on.map(rfc3339),
    })
}

/// The one place a full key value is ever written: the creation output.
pub fn created_key_json(created: &CreatedKey) -> Value {
    let mut value = key_json(&created.key);
    if let Some(fields) = value.as_object_mut() {
        fields.insert("value".into(), json!(created.value.expose()));
    }
    value
}

pub fn key_line(key: &ApiKey) -> String {
    format!(
        "{}  {:<25}  {:<7}  {:<4}  {:<8}  …{}",
        key.id,
        key.name.as_str(),
        key.key_type,
        key.mode,
        if key.is_active() {
            "active"
        } else {
            "inactive"
        },
        key.last4
    )
}

pub fn created_key_line(created: &CreatedKey) -> String {
    format!(
        "{}  {}  ({} {})\n  value: {}   (shown once; store it now)",
        created.key.id,
        created.key.name.as_str(),
        created.key.key_type,
        created.key.mode,
        created.value.expose()
    )
}

pub fn user_json(user: &User) -> Value {
    json!({
        "id": user.id,
        "email": user.email.as_str(),
        "role": user.role.as_str(),
        "createdOn": rfc3339(user.created_on),
    })
}
