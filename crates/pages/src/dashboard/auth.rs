//! Who a dashboard request is: the session cookie, the signed-in user it names, and the checks a
//! form that changes anything must pass (this session's token, our own origin, an admin).

use holdfast_web::client_address::client_address;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;

use actix_web::dev::Payload;
use actix_web::http::header;
use actix_web::{FromRequest, HttpRequest, web};
use holdfast_domain::audit::Actor;
use holdfast_domain::auth::Principal;
use holdfast_domain::dashboard::{BearerSecret, SignedIn};
use holdfast_domain::mode::KeyType;
use holdfast_domain::scope::Scope;
use holdfast_domain::user::Role;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::DashboardError;
use crate::PagesState;
use holdfast_web::same_origin::is_same_origin;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "holdfast_session";

/// The session secret a request's cookie carries, if it could be one of ours.
pub fn presented_secret(req: &HttpRequest) -> Option<BearerSecret> {
    req.headers()
        .get_all(header::COOKIE)
        .filter_map(|value| value.to_str().ok())
        .flat_map(|cookies| cookies.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == SESSION_COOKIE)
        .and_then(|(_, value)| BearerSecret::presented(value))
}

/// The `Set-Cookie` value that hands `secret` to the browser: script cannot read it, no other
/// site's request carries it, and over TLS it travels only encrypted. No `Max-Age`: the server
/// ends the session (idle or absolute), and the browser forgets it when it closes. `Secure`
/// when people reach Holdfast at an `https` public URL, or when this request came over TLS
/// (a proxy's `X-Forwarded-Proto` says so: believed from anyone, as it can only add the flag).
pub fn session_cookie(req: &HttpRequest, secret: &BearerSecret) -> String {
    let configured = req
        .app_data::<actix_web::web::Data<crate::PagesState>>()
        .is_some_and(|state| state.secure_cookies);
    let secure = if configured || req.connection_info().scheme() == "https" {
        "; Secure"
    } else {
        ""
    };
    format!(
        "{SESSION_COOKIE}={}; Path=/dashboard; HttpOnly; SameSite=Strict{secure}",
        secret.expose()
    )
}

/// The answer to a sign-in that opened a session: its cookie, and on to API Keys.
pub fn signed_in_now(req: &HttpRequest, secret: &BearerSecret) -> actix_web::HttpResponse {
    actix_web::HttpResponse::SeeOther()
        .insert_header((header::LOCATION, "/dashboard/keys"))
        .insert_header((header::SET_COOKIE, session_cookie(req, secret)))
        .insert_header((header::CACHE_CONTROL, "no-store"))
        .finish()
}

/// The `Set-Cookie` value that makes the browser forget the session.
pub fn cleared_cookie() -> String {
    format!("{SESSION_COOKIE}=; Path=/dashboard; HttpOnly; SameSite=Strict; Max-Age=0")
}

/// A signed-in request: the user, their session, and the token their forms carry.
#[derive(Debug, Clone)]
pub struct Signed {
    pub who: SignedIn,
    pub secret: BearerSecret,
    pub csrf: String,
    /// Where the request came from (through trusted proxies), for the audit log.
    pub address: Option<IpAddr>,
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

    /// The signed-in user, as the audit log names them.
    pub fn actor(&self) -> Actor {
        Actor::dashboard(self.who.user.id.clone(), self.address)
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
        let state = req.app_data::<web::Data<PagesState>>().cloned();
        let address = client_address(req);
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
            Ok(Self {
                who,
                secret,
                csrf,
                address,
            })
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

/// A form with no fields but its token (a toggle, a deletion, sign-out).
#[derive(Debug, Deserialize)]
pub struct NoFields {}

/// A form of a signed-in user (of an admin when `ADMIN`), checked before the handler runs, in
/// this order: the session, our own origin, the form's token, the user's role, and only then
/// the form's fields. A forged form is refused as forged and a viewer's as a viewer's,
/// whatever else they hold.
#[derive(Debug)]
pub struct CheckedForm<T, const ADMIN: bool> {
    pub signed: Signed,
    pub fields: T,
}

/// Any signed-in user's form (sign-out, the mode switch).
pub type SignedForm<T> = CheckedForm<T, false>;
/// A change only an admin may make.
pub type AdminForm<T> = CheckedForm<T, true>;

impl<T: DeserializeOwned + 'static, const ADMIN: bool> FromRequest for CheckedForm<T, ADMIN> {
    type Error = DashboardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let same_origin = is_same_origin(req);
        let signed = Signed::from_request(req, payload);
        let body = web::Bytes::from_request(req, payload);
        Box::pin(async move {
            let signed = signed.await?;
            if !same_origin {
                return Err(DashboardError::Forgery);
            }
            let body = body.await.map_err(|_| DashboardError::BadForm)?;
            let token: Token =
                serde_urlencoded::from_bytes(&body).map_err(|_| DashboardError::Forgery)?;
            if !signed.secret.accepts_csrf(&token.csrf) {
                return Err(DashboardError::Forgery);
            }
            if ADMIN && !signed.is_admin() {
                return Err(DashboardError::AdminOnly);
            }
            let fields =
                serde_urlencoded::from_bytes(&body).map_err(|_| DashboardError::BadForm)?;
            Ok(Self { signed, fields })
        })
    }
}

/// A page only an admin sees (a form to change something, a confirmation).
#[derive(Debug)]
pub struct Admin(pub Signed);

impl FromRequest for Admin {
    type Error = DashboardError;
    type Future = Pin<Box<dyn Future<Output = Result<Self, Self::Error>>>>;

    fn from_request(req: &HttpRequest, payload: &mut Payload) -> Self::Future {
        let signed = Signed::from_request(req, payload);
        Box::pin(async move {
            let signed = signed.await?;
            if signed.is_admin() {
                Ok(Self(signed))
            } else {
                Err(DashboardError::AdminOnly)
            }
        })
    }
}
