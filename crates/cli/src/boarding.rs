use holdfast_domain::boarding::underwriting::Decision;
use holdfast_domain::ids::BoardingFormId;
use serde_json::json;

use super::{explain, platform_id};
use crate::args::{BoardingCommand, BoardingTarget};
use crate::output::emit;
use holdfast_web::Services;

pub async fn run(services: &Services, cmd: BoardingCommand, json: bool) -> anyhow::Result<()> {
    let (target, decision) = match cmd {
        BoardingCommand::Approve(target) => (target, Decision::Approve),
        BoardingCommand::Decline { target, reason } => (target, Decision::Decline { reason }),
        BoardingCommand::RequestInformation {
            target,
            reason,
            fields,
        } => (target, Decision::RequestInformation { fields, reason }),
    };
    let BoardingTarget { platform, form_id } = target;
    let platform = platform_id(&platform.platform)?;
    let id = BoardingFormId::parse("form", &form_id).map_err(|e| anyhow::anyhow!("{e}"))?;
    let form = services
        .boarding
        .operator_decides(&platform, &id, decision)
        .await
        .map_err(explain)?;
    emit(
        json,
        &json!({ "id": form.id, "merchantId": form.merchant_id, "status": form.status }),
        || {
            format!(
                "{} is now {} (merchant {})",
                form.id, form.status, form.merchant_id
            )
        },
    );
    Ok(())
}
