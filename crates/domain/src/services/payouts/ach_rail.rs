//! The live bank rail (docs/money.md, "The live rail"): live payouts written into NACHA files
//! for the operator's transfer to take to the bank, the bank's returns read back, and payouts
//! paid once their file has settled.

use std::collections::BTreeMap;
use std::sync::Arc;

use time::{Date, Duration, OffsetDateTime};

use super::{BATCH, PayoutService, RailReport};
use crate::Invalid;
use crate::ids::{AchFileId, PayoutId};
use crate::merchant::Currency;
use crate::mode::Mode;
use crate::payout::ach::{FileNumbers, effective_date};
use crate::payout::nacha::{self, AchReturn, Credit, Originator};
use crate::payout::{Payout, PayoutState};
use crate::ports::{AchHandOver, AchStore, BankDrop, CardVault, Sealed, StoreError, WriteAchFile};
use crate::scope::Scope;
use crate::services::boarding::{self, BANK_ACCOUNT};

/// The most credits one file carries; more wait for the next run (and its file).
const FILE_MAX: usize = 50_000;

/// The most cents one file carries: its controls' twelve digits.
const FILE_TOTAL_MAX: i64 = 999_999_999_999;

/// The least time between two files of one bank: runs every minute make at most 24 files a
/// day, well inside the 36 a bank tells apart.
const FILE_GAP: Duration = Duration::HOUR;

/// The live rail: who the files are from, where they are kept, and the directories they pass
/// through.
#[derive(Clone)]
pub struct AchRail {
    /// The platform's side of its files.
    pub originator: Originator,
    /// The files and the payouts they carry.
    pub files: Arc<dyn AchStore>,
    /// The outbox and the inbox.
    pub drop: Arc<dyn BankDrop>,
}

impl std::fmt::Debug for AchRail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AchRail")
            .field("originator", &self.originator)
            .finish_non_exhaustive()
    }
}

/// A credit as the rail holds it until the file is written.
struct Payee {
    routing: String,
    account: String,
    name: String,
    amount: i64,
}

impl std::fmt::Debug for Payee {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Payee(…)")
    }
}

/// Writes the file once the store says which payouts it carries and with which numbers, and
/// seals it: its text holds account numbers.
struct FileWriter {
    file: AchFileId,
    originator: Originator,
    payees: BTreeMap<PayoutId, Payee>,
    created: OffsetDateTime,
    effective: Date,
    vault: Arc<dyn CardVault>,
}

/// What the vault binds a file's sealed text to: its id.
fn vault_context(file: &AchFileId) -> String {
    format!("{file}:ach_file")
}

impl WriteAchFile for FileWriter {
    fn write(&self, numbers: FileNumbers, payouts: &[Payout]) -> Result<Sealed, Invalid> {
        let references: Vec<String> = payouts.iter().map(|p| reference(&p.id)).collect();
        let credits = payouts
            .iter()
            .zip(&references)
            .map(|(payout, reference)| {
                let payee = self
                    .payees
                    .get(&payout.id)
                    .filter(|payee| payee.amount == payout.amount)
                    .ok_or_else(|| Invalid::new("credits", "a payout the rail did not read"))?;
                Ok(Credit {
                    routing: &payee.routing,
                    account: &payee.account,
                    savings: false,
                    amount: payee.amount,
                    name: &payee.name,
                    reference,
                })
            })
            .collect::<Result<Vec<_>, Invalid>>()?;
        let file = nacha::credit_file(
            &self.originator,
            &credits,
            self.created,
            self.effective,
            numbers.modifier,
            numbers.first_trace,
        )?;
        Ok(self.vault.seal(&vault_context(&self.file), &file.text))
    }
}

/// What the receiver's statement shows of a payout: the last 15 characters of its id.
fn reference(id: &PayoutId) -> String {
    let id = id.as_str();
    id[id.len().saturating_sub(15)..].to_owned()
}

impl PayoutService {
    /// One run of the live rail: the pending live payouts go into a new file (to in transit);
    /// every file recorded and not yet in the outbox (that one, and any a stop left) is put
    /// there, oldest first; the return files in the inbox fail the payouts they name; and the
    /// payouts whose file is in the outbox and has settled are paid.
    #[tracing::instrument(level = "debug", skip_all)]
    pub async fn run_ach_rail(&self, rail: &AchRail) -> Result<RailReport, StoreError> {
        // A file that cannot be made (the day's 36 used up, the database failing), or put in the
        // outbox (the disk, the vault), must not stop the bank's returns being read and settled
        // payouts being paid: logged, tried again next run.
        let sent = match self.hand_over_live(rail).await {
            Ok(sent) => sent,
            Err(e) => {
                tracing::error!(error = %e, "no ach file made this run");
                0
            }
        };
        // Once, after the hand-over: the new file and any a stop left unsent, oldest first.
        if let Err(e) = self.send_unsent(rail).await {
            tracing::error!(error = %e, "an ach file could not be put in the outbox");
        }
        let failed = self.read_returns(rail).await?;
        let paid = self.pay_settled(rail).await?;
        if sent + failed + paid > 0 {
            tracing::info!(sent, paid, failed, "ach rail run");
        }
        Ok(RailReport {
            made: 0,
            sent,
            paid,
            failed,
        })
    }

    /// The pending live payouts made by now, in one file: how many it carries.
    async fn hand_over_live(&self, rail: &AchRail) -> Result<u64, StoreError> {
        let now = self.clock.now();
        let mut payees = BTreeMap::new();
        let mut total = 0_i64;
        let mut after = None;
        'reading: loop {
            let batch = self
                .payouts
                .payouts_to_hand_over(Mode::Live, PayoutState::Pending, now, after.clone(), BATCH)
                .await?;
            let full = batch.len() == BATCH as usize;
            after = batch.last().map(|p| (p.created_on, p.id.clone()));
            for payout in batch {
                if payees.len() == FILE_MAX || total > FILE_TOTAL_MAX - payout.amount {
                    break 'reading;
                }
                match self.payee(&payout).await? {
                    Ok(payee) => {
                        total += payout.amount;
                        payees.insert(payout.id, payee);
                    }
                    Err(why) => {
                        tracing::error!(payout = %payout.id, why, "payout left for an operator");
                    }
                }
            }
            if !full {
                break;
            }
        }
        if payees.is_empty() {
            return Ok(0);
        }
        if let Some(last) = rail.files.last_ach_file_on(&rail.originator.odfi).await?
            && now < last + FILE_GAP
        {
            return Ok(0);
        }
        let hand_over = AchHandOver {
            id: AchFileId::from_suffix(&self.ids.next_id()),
            odfi: rail.originator.odfi.clone(),
            created_on: now,
            effective_on: effective_date(now.date()),
            payouts: payees.keys().cloned().collect(),
        };
        let writer = FileWriter {
            file: hand_over.id.clone(),
            originator: rail.originator.clone(),
            payees,
            created: now,
            effective: hand_over.effective_on,
            vault: self.vault.clone(),
        };
        let recorded = rail
            .files
            .record_ach_file(&hand_over, Arc::new(writer))
            .await?;
        if recorded.payouts > 0 {
            tracing::info!(
                file = %hand_over.id,
                payouts = recorded.payouts,
                total = recorded.total,
                effective = %hand_over.effective_on,
                "ach file recorded"
            );
        }
        Ok(recorded.payouts)
    }

    /// Where a live payout goes, or why the rail cannot write it (in words that never repeat
    /// its account or routing number).
    async fn payee(&self, payout: &Payout) -> Result<Result<Payee, &'static str>, StoreError> {
        if payout.currency != Currency::USD {
            return Ok(Err("live payouts go by ACH, in USD only"));
        }
        let Some(form_id) = &payout.bank_form else {
            return Ok(Err("it has no boarding form's bank account"));
        };
        let scope = Scope::new(payout.platform_id.clone(), payout.mode);
        let Some(form) = self.forms.get_form(&scope, form_id).await? else {
            return Ok(Err("its boarding form is gone"));
        };
        let (Some(routing), Some(sealed)) = (form.answers.routing_number, form.bank_account) else {
            return Ok(Err(
                "its account is not a US account: ACH pays US accounts only",
            ));
        };
        let Ok(account) = self.vault.open(
            &boarding::vault_context(form_id, BANK_ACCOUNT),
            &sealed.sealed,
        ) else {
            return Ok(Err("its bank account does not open from the vault"));
        };
        let name = form
            .answers
            .account_holder
            .or(form.answers.legal_name)
            .unwrap_or_default();
        let payee = Payee {
            routing,
            account,
            name,
            amount: payout.amount,
        };
        let credit = Credit {
            routing: &payee.routing,
            account: &payee.account,
            savings: false,
            amount: payee.amount,
            name: &payee.name,
            reference: "",
        };
        Ok(nacha::checked(&credit).map(|_| payee))
    }

    /// Reads every return file in the inbox: each return fails the payout it names. How many
    /// it failed. A file that cannot be read is set aside, named in the log.
    async fn read_returns(&self, rail: &AchRail) -> Result<u64, StoreError> {
        let mut failed = 0;
        for file in rail.drop.waiting_returns().await? {
            if !nacha::is_whole(&file.text) {
                // Still being written by the transfer (or cut short): read once it is whole.
                tracing::warn!(file = %file.name, "a return file without its file control waits");
                continue;
            }
            match nacha::read_returns(&file.text) {
                Err(why) => {
                    tracing::error!(file = %file.name, error = %why, "return file refused");
                    rail.drop.returns_done(&file.name, false).await?;
                }
                Ok(returns) => {
                    for returned in returns {
                        if self.fail_returned(rail, returned).await? {
                            failed += 1;
                        }
                    }
                    tracing::info!(file = %file.name, "return file read");
                    rail.drop.returns_done(&file.name, true).await?;
                }
            }
        }
        Ok(failed)
    }

    /// Fails the payout a return names, if it is in transit or paid: whether it did. A file
    /// read twice fails nothing twice.
    async fn fail_returned(
        &self,
        rail: &AchRail,
        returned: AchReturn<'_>,
    ) -> Result<bool, StoreError> {
        let trace = returned.original_trace;
        let Some(payout) = rail.files.payout_by_trace(trace).await? else {
            tracing::warn!(trace, "a return names no entry we sent");
            return Ok(false);
        };
        if !matches!(payout.state, PayoutState::InTransit | PayoutState::Paid) {
            return Ok(false);
        }
        let change = self
            .change(&payout, PayoutState::Failed, Some(returned.code))
            .map_err(|e| StoreError::Unexpected(e.to_string()))?;
        let moved = self.payouts.move_payout(&change, None).await?;
        if moved {
            tracing::info!(payout = %payout.id, code = %returned.code.as_code(), "payout returned");
        }
        Ok(moved)
    }

    /// Puts every file recorded and not yet in the outbox there, oldest first, and marks it
    /// sent. A file that does not open from the vault stops the run: later files must not
    /// overtake it.
    async fn send_unsent(&self, rail: &AchRail) -> Result<(), StoreError> {
        for file in rail.files.unsent_ach_files().await? {
            let text = self
                .vault
                .open(&vault_context(&file.id), &file.sealed)
                .map_err(|e| StoreError::Unexpected(format!("{}: {e}", file.id)))?;
            rail.drop.send(&format!("{}.ach", file.id), &text).await?;
            rail.files.ach_file_sent(&file.id, self.clock.now()).await?;
            tracing::info!(file = %file.id, "ach file put in the outbox");
        }
        Ok(())
    }

    /// Pays every live payout in transit whose file has settled by today: how many.
    async fn pay_settled(&self, rail: &AchRail) -> Result<u64, StoreError> {
        let today = self.clock.now().date();
        let mut paid = 0;
        let mut after = None;
        loop {
            let batch = rail
                .files
                .payouts_arrived(today, after.clone(), BATCH)
                .await?;
            let full = batch.len() == BATCH as usize;
            after = batch.last().map(|p| p.id.clone());
            for payout in batch {
                let id = payout.id.clone();
                let moved = match self.change(&payout, PayoutState::Paid, None) {
                    Ok(change) => self.payouts.move_payout(&change, None).await,
                    Err(e) => Err(StoreError::Unexpected(e.to_string())),
                };
                match moved {
                    Ok(true) => paid += 1,
                    Ok(false) => {}
                    Err(e) => {
                        tracing::error!(payout = %id, error = %e, "payout left for an operator");
                    }
                }
            }
            if !full {
                break;
            }
        }
        Ok(paid)
    }
}

#[cfg(test)]
mod tests;
