//! Who a dashboard request is: the session cookie, the signed-in user it names, and the checks a
//! form that changes anything must pass (this session's token, our own origin, an admin).

use std::future::Future;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, web};
use holdfast_domain::auth::Principal;
use holdfast_domain::dashboard::{Secret, SignedIn};
use holdfast_domain::mode::KeyType;
use holdfast_domain::scope::Scope;
use holdfast_domain::user::Role;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::DashboardError;
use crate::http::same_origin::is_same_origin;
use crate::state::AppState;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "holdfast_session";

/// The session secret a request's cookie carries, if it could be one of ours.
pub fn presented_secret(req: &HttpRequest) -> Option<Secret> {
    req.headers()
        .get_all(header::COOKIE)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|cookies| cookies.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .and_then(|(_, value)| Secret::presented(value))
}

/// The `Set-Cookie` value that hands `secret` to the browser: script cannot read it, no other
/// site's request carries it, and over TLS it travels only encrypted. No `Max-Age`: the server
/// ends the session (idle or absolute), and the browser forgets it when it closes.
pub fn session_cookie(req: &HttpRequest, secret: &Secret) -> String {
    let secure = if req.connection_info().scheme() == "https" {
        "; Secure"
    } else {
        ""
    };
    format!(
        "{SESSION_COOKIE}={}; Path=/dashboard; HttpOnly; SameSite=Strict{secure}",
        secret.expose()
    )
}

/// The `Set-Cookie` value that makes the browser forget the session.
pub fn cleared_cookie() -> String {
    format!("{SESSION_COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// A signed-in request: the user, their session, and the token their forms carry.
#[derive(Debug, Clone)]
pub struct Signed {
    pub who: SignedIn,
    pub secret: Secret,
    pub csrf: String,
}

impl Signed {
    /// The principal the services see: the user's platform in the session's mode, with a
    /// private key's access and no key.
    pub fn principal(&self) -> Principal {
        Principal {
            scope: Scope::new(self.who.user.platform_id.clone(), self.who.session.mode),
            key_type: KeyType::Private,
            key_id: None,
            user_id: self.who.user.id.clone(),
        }
    }

    pub fn is_admin(&self) -> bool {
        self.who.user.role == Role::Admin
    }
}

impl FromRequest for Signed {
    type Error = DashboardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, _: &mut Payload) -> Self::Future {
        let secret = presented_secret(req);
        let state = req.app_data::<web::Data<AppState>>().cloned();
        Box::pin(async move {
            let (Some(secret), Some(state)) = (secret, state) else {
                return Err(DashboardError::SignIn);
            };
            let who = state
                .dashboard
                .signed_in(&secret)
                .await?
                .ok_or(DashboardError::SignIn)?;
            let csrf = secret.csrf_token();
            Ok(Self { who, secret, csrf })
        })
    }
}

/// The field every state-changing form carries; read before the form's own fields, so a
/// forged form is refused as forged whatever else it holds.
#[derive(Debug, Deserialize)]
struct Token {
    /// Missing is as wrong as forged: refused the same way.
    #[serde(default)]
    csrf: String,
}

/// A form of a signed-in user: the form's token this session's, posted from our own pages.
/// Anything less is refused before the handler runs.
#[derive(Debug)]
pub struct SignedForm<T> {
    pub signed: Signed,
    pub fields: T,
}

/// A signed-in request's form body, once the session, the origin and the form's token pass.
fn checked_body(
    req: &HttpRequest,
    payload: &mut Payload,
) -> impl Future<Output = Result<(Signed, web::Bytes), DashboardError>> + use<> {
    let same_origin = is_same_origin(req);
    let signed = Signed::from_request(req, payload);
    let body = web::Bytes::from_request(req, payload);
    async move {
        let signed = signed.await?;
        if !same_origin {
            return Err(DashboardError::Forgery);
        }
        let body = body.await.map_err(|_| DashboardError::BadForm)?;
        let token: Token =
            serde_urlencoded::from_bytes(&body).map_err(|_| DashboardError::Forgery)?;
        if !same_token(&signed.csrf, &token.csrf) {
            return Err(DashboardError::Forgery);
        }
        Ok((signed, body))
    }
}

impl<T: DeserializeOwned + 'static> FromRequest for SignedForm<T> {
    type Error = DashboardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let checked = checked_body(req, payload);
        Box::pin(async move {
            let (signed, body) = checked.await?;
            let fields =
                serde_urlencoded::from_bytes(&body).map_err(|_| DashboardError::BadForm)?;
            Ok(Self { signed, fields })
        })
    }
}

/// Compared in constant time: how long a wrong token takes says nothing of the right one.
fn same_token(expected: &str, sent: &str) -> bool {
    let (expected, sent) = (expected.as_bytes(), sent.as_bytes());
    expected.len() == sent.len()
        && expected
            .iter()
            .zip(sent)
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A change by an admin: a signed-in form whose user is an admin.
#[derive(Debug)]
pub struct AdminForm<T> {
    pub signed: Signed,
    pub fields: T,
}

impl<T: DeserializeOwned + 'static> FromRequest for AdminForm<T> {
    type Error = DashboardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let checked = checked_body(req, payload);
        Box::pin(async move {
            let (signed, body) = checked.await?;
            // A viewer is refused as a viewer, whatever the form holds.
            if !signed.is_admin() {
                return Err(DashboardError::AdminOnly);
            }
            let fields =
                serde_urlencoded::from_bytes(&body).map_err(|_| DashboardError::BadForm)?;
            Ok(Self { signed, fields })
        })
    }
}
