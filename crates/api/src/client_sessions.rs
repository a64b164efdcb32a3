//! `/v1/client-sessions`: one checkout's session (private key). Its `clientSecret` goes to the
//! checkout page, whose hosted fields tokenize under it; docs/hosted-fields.md.

use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use holdfast_domain::auth::Access;
use holdfast_domain::ids::{ClientSessionId, MerchantId, TxnId};
use holdfast_domain::merchant::Currency;
use holdfast_domain::mode::Mode;
use holdfast_domain::payment::amount::Amount;
use holdfast_domain::payment::client_session::{ClientSession, PaymentMethod, SessionStatus};
use holdfast_domain::schema::timestamp;
use holdfast_domain::services::{CreatedSession, NewClientSession};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::extract::{ApiJson, Caller};
use super::idempotency::{AnswerWithChange, changed, created};
use super::routes::Routes;
use super::views::{rfc3339, timestamp_or_null};
use crate::ApiState;
use holdfast_web::error::{ApiError, ErrorEnvelope};

pub fn routes(r: &mut Routes) {
    r.add(
        Method::POST,
        "/v1/client-sessions",
        Access::Private,
        web::route().to(create),
    );
    r.add(
        Method::GET,
        "/v1/client-sessions/{id}",
        Access::Private,
        web::route().to(get),
    );
    r.add(
        Method::POST,
        "/v1/client-sessions/{id}/cancel",
        Access::Private,
        web::route().to(cancel),
    );
}

/// A checkout: who it pays, how much, how it may pay and for how long.
#[derive(Deserialize, ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[schema(example = json!({"merchantId": "mid_01M86V7Z0C0QXAY2N3Q4RWQJ1T", "amount": 2500, "paymentMethods": ["card", "google_pay"]}))]
struct CreateClientSession {
    #[schema(value_type = MerchantId, required = true)]
    merchant_id: Option<String>,
    #[schema(schema_with = crate::openapi::fields::amount, required = true)]
    amount: Option<i64>,
    /// The merchant's currency; any other is refused.
    #[schema(value_type = Option<Currency>)]
    currency: Option<String>,
    /// `card` (the default), `apple_pay`, `google_pay`.
    #[schema(value_type = Option<Vec<PaymentMethod>>, min_items = 1)]
    payment_methods: Option<Vec<String>>,
    #[schema(schema_with = crate::openapi::fields::expires_in)]
    expires_in: Option<i64>,
}

/// A client session as the API shows it; `clientSecret` only in the answer that creates it.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "camelCase")]
#[schema(as = ClientSession)]
struct ClientSessionView<'a> {
    #[schema(value_type = ClientSessionId)]
    id: &'a ClientSessionId,
    /// For the checkout page (`Holdfast.fields({clientSecret})`); shown once, never stored.
    #[serde(skip_serializing_if = "Option::is_none")]
    client_secret: Option<&'a str>,
    #[schema(value_type = MerchantId)]
    merchant_id: &'a MerchantId,
    amount: i64,
    currency: Currency,
    payment_methods: &'a [PaymentMethod],
    /// `open`, `completed`, `canceled` or `expired`.
    status: SessionStatus,
    mode: Mode,
    /// The payment that completed the session.
    #[schema(value_type = Option<TxnId>)]
    transaction_id: Option<&'a TxnId>,
    #[schema(schema_with = timestamp)]
    expires_at: String,
    #[schema(schema_with = timestamp)]
    created_on: String,
    /// When it was completed or canceled.
    #[schema(schema_with = timestamp_or_null)]
    closed_on: Option<String>,
}

fn view<'a>(session: &'a ClientSession, secret: Option<&'a str>) -> ClientSessionView<'a> {
    ClientSessionView {
        id: &session.id,
        client_secret: secret,
        merchant_id: &session.merchant_id,
        amount: session.amount,
        currency: session.currency,
        payment_methods: &session.payment_methods,
        status: session.status,
        mode: session.mode,
        transaction_id: session.transaction_id.as_ref(),
        expires_at: rfc3339(session.expires_on),
        created_on: rfc3339(session.created_on),
        closed_on: session.closed_on.map(rfc3339),
    }
}

fn new_session(body: CreateClientSession) -> Result<NewClientSession, ApiError> {
    let required = |field: &'static str| ApiError::invalid(field, "is required");
    let merchant_id = body.merchant_id.ok_or_else(|| required("merchantId"))?;
    let payment_methods = body
        .payment_methods
        .map(|words| {
            words
                .iter()
                .enumerate()
                .map(|(i, word)| {
                    word.parse::<PaymentMethod>().map_err(|_| {
                        ApiError::invalid(
                            format!("paymentMethods[{i}]"),
                            "must be card, apple_pay or google_pay",
                        )
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .transpose()?;
    Ok(NewClientSession {
        merchant_id: MerchantId::parse("merchantId", &merchant_id)?,
        amount: Amount::new("amount", body.amount.ok_or_else(|| required("amount"))?)?,
        currency: body.currency.as_deref().map(Currency::parse).transpose()?,
        payment_methods,
        expires_in: body.expires_in,
    })
}

/// Opens a client session for one checkout.
#[utoipa::path(post, path = "/v1/client-sessions", tag = "hosted client", operation_id = "createClientSession", request_body = CreateClientSession, responses((status = 201, description = "The session, with its client secret (shown this once).", body = ClientSessionView)))]
async fn create(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    req: HttpRequest,
    ApiJson(body): ApiJson<CreateClientSession>,
) -> Result<HttpResponse, ApiError> {
    let new = new_session(body)?;
    // The stored answer a replay gets has no secret: only its SHA-256 is kept anywhere.
    let answer = AnswerWithChange::new(&req, |c: &CreatedSession| created(&view(&c.session, None)));
    let made = state
        .client_sessions
        .create(&who, new, answer.recorder().as_ref())
        .await?;
    Ok(answer.send_answer(created(&view(&made.session, Some(made.secret.expose())))))
}

fn session_id(raw: &str) -> Result<ClientSessionId, ApiError> {
    ClientSessionId::parse("id", raw).map_err(|_| ApiError::NotFound {
        resource: "client session",
    })
}

/// Reads a client session (never its secret).
#[utoipa::path(get, path = "/v1/client-sessions/{id}", tag = "hosted client", operation_id = "getClientSession", params(("id" = ClientSessionId, Path, description = "The resource's id.")), responses((status = 200, description = "The session.", body = ClientSessionView)))]
async fn get(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let session = state.client_sessions.get(&who, &session_id(&id)?).await?;
    Ok(HttpResponse::Ok().json(view(&session, None)))
}

/// Cancels an open client session: nothing more can be tokenized or paid under it.
#[utoipa::path(post, path = "/v1/client-sessions/{id}/cancel", tag = "hosted client", operation_id = "cancelClientSession", params(("id" = ClientSessionId, Path, description = "The resource's id.")), responses((status = 200, description = "The session, canceled.", body = ClientSessionView), (status = 409, description = "The session is not open (completed, canceled or expired).", body = ErrorEnvelope)))]
async fn cancel(
    state: web::Data<ApiState>,
    Caller(who): Caller,
    id: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let session = state
        .client_sessions
        .cancel(&who, &session_id(&id)?)
        .await?;
    Ok(super::idempotency::respond(changed(&view(&session, None))))
}
