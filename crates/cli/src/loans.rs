//! `holdfast loans review`: the loans' review, now (offers expire, accepted loans are paid
//! out, standings move); `holdfast loans charge-off`: what a loan still owes written off
//! (docs/loans.md).

use holdfast_domain::ids::LoanId;
use holdfast_domain::scope::Scope;
use holdfast_web::Services;

use crate::{LoanCommand, explain, output, platform_id};

pub async fn run(services: &Services, command: LoanCommand, json: bool) -> anyhow::Result<()> {
    match command {
        LoanCommand::Review => {
            let report = services.loans.review().await?;
            output::emit(
                json,
                &serde_json::json!({
                    "expired": report.expired,
                    "paidOut": report.paid_out,
                    "moved": report.moved,
                }),
                || {
                    format!(
                        "{} offer(s) expired, {} advance(s) paid out, {} standing(s) moved",
                        report.expired, report.paid_out, report.moved
                    )
                },
            );
            Ok(())
        }
        LoanCommand::ChargeOff {
            loan,
            platform,
            mode,
        } => {
            let id = LoanId::parse("loan", &loan).map_err(|e| anyhow::anyhow!("--{e}"))?;
            let scope = Scope::new(platform_id(&platform.platform)?, mode.into());
            let charged = services
                .loans
                .charge_off(&scope, &id)
                .await
                .map_err(explain)?;
            output::emit(json, &charged, || {
                format!(
                    "{} charged off: {} of {} repaid, the rest written off",
                    charged.id,
                    charged.repaid,
                    charged.terms.total()
                )
            });
            Ok(())
        }
    }
}
