//! `holdfast ledger verify`: the books checked whole; `holdfast ledger settle`: one settlement
//! run, now; `holdfast ledger pay-out`: one run of the payout rails, now (docs/money.md).

use holdfast_web::Services;

use crate::{LedgerCommand, explain, output};

pub async fn run(services: &Services, command: LedgerCommand, json: bool) -> anyhow::Result<()> {
    match command {
        LedgerCommand::Settle { from_start } => {
            let report = services.settlement.run(from_start).await?;
            output::emit(
                json,
                &serde_json::json!({
                    "transactions": report.transactions,
                    "merchants": report.merchants,
                }),
                || {
                    format!(
                        "settled {} transaction(s) for {} merchant(s)",
                        report.transactions, report.merchants
                    )
                },
            );
            Ok(())
        }
        LedgerCommand::PayOut => {
            let report = services.payouts.run_rails().await?;
            output::emit(
                json,
                &serde_json::json!({
                    "made": report.made,
                    "sent": report.sent,
                    "paid": report.paid,
                    "failed": report.failed,
                }),
                || {
                    format!(
                        "{} scheduled payout(s) made; {} sent to the bank; {} paid, {} returned",
                        report.made, report.sent, report.paid, report.failed
                    )
                },
            );
            Ok(())
        }
        LedgerCommand::Verify => {
            let check = services.ledger.check().await.map_err(explain)?;
            output::emit(
                json,
                &serde_json::json!({
                    "journals": check.journals,
                    "entries": check.entries,
                    "problems": check.problems,
                }),
                || {
                    let mut lines = vec![format!(
                        "{} journal(s), {} entries checked: {}",
                        check.journals,
                        check.entries,
                        if check.problems.is_empty() {
                            "every journal sums to zero and every balance is its entries'"
                        } else {
                            "differences found"
                        }
                    )];
                    lines.extend(check.problems.iter().map(|p| format!("  {p}")));
                    lines.join("\n")
                },
            );
            if check.problems.is_empty() {
                Ok(())
            } else {
                anyhow::bail!(
                    "the ledger does not add up: {} difference(s)",
                    check.problems.len()
                )
            }
        }
    }
}
