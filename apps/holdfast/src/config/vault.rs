//! The card vault's keys.

use clap::Args;

/// The card vault's keys.
#[derive(Clone, Args)]
pub struct VaultArgs {
    /// Base64 of 32 bytes: the key that seals card data (AES-256-GCM).
    #[arg(
        long = "vault-key",
        env = "HOLDFAST_VAULT_KEY",
        hide_env_values = true,
        global = true
    )]
    pub key: Option<String>,

    /// The id stored beside what the key seals, so it can be rotated.
    #[arg(
        long = "vault-key-id",
        env = "HOLDFAST_VAULT_KEY_ID",
        default_value = "k1",
        global = true
    )]
    pub key_id: String,

    /// Retired keys that still open what they sealed: `id:base64,id:base64`.
    #[arg(
        long = "vault-previous-keys",
        env = "HOLDFAST_VAULT_PREVIOUS_KEYS",
        hide_env_values = true,
        global = true
    )]
    pub previous: Option<String>,

    /// Where the key is kept when none is given: created with a random key on first use.
    #[arg(
        long = "vault-key-file",
        env = "HOLDFAST_VAULT_KEY_FILE",
        default_value = "./data/vault.key",
        global = true
    )]
    pub key_file: std::path::PathBuf,
}

impl std::fmt::Debug for VaultArgs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VaultArgs")
            .field("key_id", &self.key_id)
            .finish_non_exhaustive()
    }
}

impl VaultArgs {
    /// Builds the vault. Errors name the variable at fault; keys never appear in them.
    /// The vault as the port that seals email bodies at rest.
    pub fn sealer(&self) -> anyhow::Result<std::sync::Arc<dyn holdfast_domain::ports::CardVault>> {
        Ok(std::sync::Arc::new(self.vault()?))
    }

    pub fn vault(&self) -> anyhow::Result<holdfast_vault::AesGcmVault> {
        use holdfast_vault::{AesGcmVault, VaultKey};
        let key = match &self.key {
            Some(key) => key.clone(),
            None => self.key_from_file()?,
        };
        let current = VaultKey::from_base64(&self.key_id, &key)
            .map_err(|e| anyhow::anyhow!("HOLDFAST_VAULT_KEY: {e}"))?;
        let mut previous = Vec::new();
        for pair in self
            .previous
            .iter()
            .flat_map(|p| p.split(','))
            .filter(|p| !p.trim().is_empty())
        {
            let (id, key) = pair.split_once(':').ok_or_else(|| {
                anyhow::anyhow!("HOLDFAST_VAULT_PREVIOUS_KEYS: expected id:base64 pairs")
            })?;
            previous.push(
                VaultKey::from_base64(id.trim(), key)
                    .map_err(|e| anyhow::anyhow!("HOLDFAST_VAULT_PREVIOUS_KEYS: {e}"))?,
            );
        }
        Ok(AesGcmVault::new(current, previous))
    }

    fn key_from_file(&self) -> anyhow::Result<String> {
        let path = &self.key_file;
        if let Ok(key) = std::fs::read_to_string(path) {
            return Ok(key.trim().to_owned());
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)?;
        }
        let key = holdfast_vault::VaultKey::generate_base64();
        // create_new: two processes starting together cannot both write a key.
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
            .and_then(|mut file| {
                use std::io::Write;
                file.write_all(key.as_bytes())
            });
        match written {
            Ok(()) => {
                restrict_permissions(path);
                tracing::warn!(file = %path.display(), "created a new vault key file; back it up, or set HOLDFAST_VAULT_KEY");
                Ok(key)
            }
            Err(_) => Ok(std::fs::read_to_string(path)?.trim().to_owned()),
        }
    }
}

#[cfg(unix)]
fn restrict_permissions(path: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    let _ = std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600));
}

#[cfg(not(unix))]
fn restrict_permissions(_: &std::path::Path) {}
