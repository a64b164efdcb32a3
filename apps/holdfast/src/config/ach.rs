//! The live bank rail's settings (docs/money.md, "The live rail"): who the NACHA files are
//! from, and the directories they pass through. None set: live payouts stay pending.

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use holdfast_domain::payout::nacha::Originator;
use holdfast_domain::ports::{AchStore, BankDrop};
use holdfast_domain::services::AchRail;

/// The live rail's settings.
#[derive(Debug, Clone, Default, Args)]
pub struct AchArgs {
    /// The directory NACHA files are put in for the operator's transfer to take to the bank.
    /// Set, the live rail runs with the payout rails; unset, live payouts stay pending.
    #[arg(long, env = "HOLDFAST_ACH_OUTBOX", global = true)]
    pub ach_outbox: Option<PathBuf>,

    /// The directory the operator's transfer puts the bank's return files in.
    #[arg(long, env = "HOLDFAST_ACH_INBOX", global = true)]
    pub ach_inbox: Option<PathBuf>,

    /// The routing number of the originating bank (the ODFI), which the files go to.
    #[arg(long, env = "HOLDFAST_ACH_ODFI", global = true)]
    pub ach_odfi: Option<String>,

    /// The originating bank's name, as the file header gives it.
    #[arg(
        long,
        env = "HOLDFAST_ACH_ODFI_NAME",
        global = true,
        default_value = ""
    )]
    pub ach_odfi_name: String,

    /// The routing number the files are addressed to, when not the ODFI's (its ACH operator).
    #[arg(long, env = "HOLDFAST_ACH_DESTINATION", global = true)]
    pub ach_destination: Option<String>,

    /// The platform's name as merchants' bank statements show it (16 characters at most).
    #[arg(long, env = "HOLDFAST_ACH_COMPANY_NAME", global = true)]
    pub ach_company_name: Option<String>,

    /// The company id the bank assigned (10 characters at most).
    #[arg(long, env = "HOLDFAST_ACH_COMPANY_ID", global = true)]
    pub ach_company_id: Option<String>,

    /// Who the files are from, as the bank knows it (10 characters); the company id when unset.
    #[arg(long, env = "HOLDFAST_ACH_ORIGIN", global = true)]
    pub ach_origin: Option<String>,
}

impl AchArgs {
    /// The live rail over `files`, or `None` when no outbox is set. Refused, naming the
    /// variable, when a setting is missing or cannot be written into a file.
    pub fn rail(&self, files: Arc<dyn AchStore>) -> anyhow::Result<Option<AchRail>> {
        let Some(outbox) = &self.ach_outbox else {
            let stray = self.ach_inbox.is_some()
                || self.ach_odfi.is_some()
                || self.ach_company_name.is_some()
                || self.ach_company_id.is_some();
            anyhow::ensure!(
                !stray,
                "HOLDFAST_ACH_OUTBOX is needed too: the live rail's other settings are given"
            );
            return Ok(None);
        };
        let needed = |value: &Option<String>, name: &str| {
            value
                .clone()
                .with_context(|| format!("{name} is needed with HOLDFAST_ACH_OUTBOX"))
        };
        let inbox = self
            .ach_inbox
            .clone()
            .context("HOLDFAST_ACH_INBOX is needed with HOLDFAST_ACH_OUTBOX")?;
        let odfi = needed(&self.ach_odfi, "HOLDFAST_ACH_ODFI")?;
        let company_name = needed(&self.ach_company_name, "HOLDFAST_ACH_COMPANY_NAME")?;
        let company_id = needed(&self.ach_company_id, "HOLDFAST_ACH_COMPANY_ID")?;
        let originator = Originator {
            destination: self.ach_destination.clone().unwrap_or_else(|| odfi.clone()),
            destination_name: self.ach_odfi_name.clone(),
            origin: self
                .ach_origin
                .clone()
                .unwrap_or_else(|| company_id.clone()),
            origin_name: company_name.clone(),
            company_name,
            company_id,
            odfi,
        }
        .checked()
        .map_err(|e| anyhow::anyhow!("HOLDFAST_ACH_{}: {}", setting(e.field), e.message))?;
        let drop: Arc<dyn BankDrop> = Arc::new(
            holdfast_bank_files::DirectoryDrop::new(outbox.clone(), inbox)
                .map_err(|e| anyhow::anyhow!("the live rail: {e}"))?,
        );
        Ok(Some(AchRail {
            originator,
            files,
            drop,
        }))
    }
}

/// The variable's end that holds an originator field.
fn setting(field: &str) -> &'static str {
    match field {
        "odfi" => "ODFI",
        "destination" => "DESTINATION",
        "companyName" => "COMPANY_NAME",
        "companyId" => "COMPANY_ID",
        _ => "ORIGIN",
    }
}
