//! Tokens: single-use ones taken once, their sealed cards erased once used or expired.

use holdfast_domain::ids::MerchantId;
use holdfast_domain::merchant::Currency;
use holdfast_domain::payment::token::{TakeTerms, Taken};

use super::*;

/// A payment's terms at `now`, for a token bound to no merchant and no session.
fn at(now: time::OffsetDateTime) -> TakeTerms {
    TakeTerms {
        merchant: MerchantId::from_suffix("M"),
        amount: 2500,
        currency: Currency::USD,
        now,
    }
}

trait IntoToken {
    fn into_token(self) -> Option<Token>;
}

impl IntoToken for Taken {
    fn into_token(self) -> Option<Token> {
        match self {
            Taken::Token(token) => Some(*token),
            _ => None,
        }
    }
}

/// A single-use token's sealed card is erased once it is used (in the statement's SQL
/// transaction) or once it expired unused (the sweep); the row stays. Vault tokens keep it.
pub async fn single_use_cards_are_erased_once_used_or_expired(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let tokens = &stores.tokens;
    let (used, expired, fresh, vault) = (
        token(&p, "used", TokenKind::SingleUse),
        token(&p, "expired", TokenKind::SingleUse),
        token(&p, "fresh", TokenKind::SingleUse),
        token(&p, "vault", TokenKind::Vault),
    );
    for t in [&used, &expired, &fresh, &vault] {
        tokens.save(t, None).await.unwrap();
    }
    let read = async |t: &Token| tokens.find(&p.scope, &t.id).await.unwrap().unwrap();
    let handed = tokens
        .take(&p.scope, &used.id, &at(T0))
        .await
        .unwrap()
        .into_token();
    assert_eq!(
        handed.unwrap().sealed,
        used.sealed,
        "the payment gets the card"
    );
    let row = read(&used).await;
    assert!(row.sealed.ciphertext.is_empty() && row.sealed.nonce.is_empty());
    assert_eq!((row.used_on, row.card.last4.as_str()), (Some(T0), "1111"));
    // The sweep: only what expired unused, and only once.
    assert_eq!(tokens.erase_expired(T0).await.unwrap(), 0);
    let later = T0 + SINGLE_USE_LIFETIME;
    tokens
        .take(&p.scope, &fresh.id, &at(T0))
        .await
        .unwrap()
        .into_token();
    assert_eq!(tokens.erase_expired(later).await.unwrap(), 1);
    assert_eq!(tokens.erase_expired(later).await.unwrap(), 0);
    assert!(read(&expired).await.sealed.ciphertext.is_empty());
    assert_eq!(
        read(&vault).await.sealed,
        vault.sealed,
        "a vault token keeps its card"
    );
}

/// A token is deleted, its sealed card with it, only in its own platform and mode, and once:
/// afterwards it is neither found nor taken.
pub async fn a_token_is_deleted_once_in_its_own_scope(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let b = new_platform(&stores, "B").await;
    let p = principal(&a, Mode::Test);
    let tokens = &stores.tokens;
    let (vault, kept) = (
        token(&p, "vault", TokenKind::Vault),
        token(&p, "kept", TokenKind::Vault),
    );
    for t in [&vault, &kept] {
        tokens.save(t, None).await.unwrap();
    }
    for elsewhere in [principal(&a, Mode::Live), principal(&b, Mode::Test)] {
        assert!(matches!(
            tokens.delete(&elsewhere.scope, &vault.id).await,
            Err(StoreError::NotFound)
        ));
    }
    tokens.delete(&p.scope, &vault.id).await.unwrap();
    assert!(matches!(
        tokens.delete(&p.scope, &vault.id).await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(tokens.find(&p.scope, &vault.id).await.unwrap(), None);
    assert!(
        tokens
            .take(&p.scope, &vault.id, &at(T0))
            .await
            .unwrap()
            .into_token()
            .is_none(),
        "a deleted token pays no more"
    );
    assert_eq!(
        tokens
            .find(&p.scope, &kept.id)
            .await
            .unwrap()
            .map(|t| t.sealed),
        Some(kept.sealed),
        "only that token, its card kept"
    );
}

pub async fn single_use_tokens_are_taken_once_and_expire(db: Database) {
    let stores = db.stores();
    let a = new_platform(&stores, "A").await;
    let p = principal(&a, Mode::Test);
    let once = token(&p, "once", TokenKind::SingleUse);
    stores.tokens.save(&once, None).await.unwrap();
    assert_eq!(
        stores.tokens.find(&p.scope, &once.id).await.unwrap(),
        Some(once.clone()),
        "a token reads back as it was saved, sealed bytes included"
    );
    // Four payments race for one single-use token: one gets it.
    let takes = (0..4).map(|_| {
        let tokens = stores.tokens.clone();
        let (platform, id) = (p.scope.platform.clone(), once.id.clone());
        tokio::spawn(async move {
            tokens
                .take(&Scope::new(platform.clone(), Mode::Test), &id, &at(T0))
                .await
                .unwrap()
                .into_token()
        })
    });
    let mut won = 0;
    for take in takes.collect::<Vec<_>>() {
        won += usize::from(take.await.unwrap().is_some());
    }
    assert_eq!(won, 1, "a single-use token is handed out once");
    let used = stores
        .tokens
        .find(&p.scope, &once.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(used.used_on, Some(T0));

    // Expired at the instant of its expiry; another mode never sees it.
    let late = token(&p, "late", TokenKind::SingleUse);
    stores.tokens.save(&late, None).await.unwrap();
    let expiry = T0 + SINGLE_USE_LIFETIME;
    assert!(
        stores
            .tokens
            .take(
                &Scope::new(p.scope.platform.clone(), Mode::Live),
                &late.id,
                &at(T0)
            )
            .await
            .unwrap()
            == Taken::Unusable
    );
    assert!(
        stores
            .tokens
            .take(&p.scope, &late.id, &at(expiry))
            .await
            .unwrap()
            == Taken::Unusable
    );
    let just_in_time = expiry - time::Duration::microseconds(1);
    assert!(
        stores
            .tokens
            .take(&p.scope, &late.id, &at(just_in_time))
            .await
            .unwrap()
            .into_token()
            .is_some()
    );

    // A vault token is handed out every time and never marked used.
    let vault = token(&p, "vault", TokenKind::Vault);
    stores.tokens.save(&vault, None).await.unwrap();
    for _ in 0..3 {
        let handed = stores
            .tokens
            .take(&p.scope, &vault.id, &at(T0))
            .await
            .unwrap()
            .into_token();
        assert_eq!(handed.unwrap().used_on, None);
    }
    let other = new_platform(&stores, "B").await;
    assert!(
        stores
            .tokens
            .take(
                &Scope::new(other.platform.id.clone(), Mode::Test),
                &vault.id,
                &at(T0)
            )
            .await
            .unwrap()
            == Taken::Unusable
    );
}

/// One wallet payment makes one token: of racing claims of its id, one wins; the same id of the
/// other wallet is another payment.
pub async fn a_wallet_payment_is_claimed_once(db: Database) {
    use holdfast_domain::payment::wallet::WalletKind;
    let stores = db.stores();
    let claims = (0..4).map(|_| {
        let tokens = stores.tokens.clone();
        tokio::spawn(async move {
            tokens
                .claim_wallet_payment(WalletKind::GooglePay, "AH2Ejtc", T0)
                .await
                .unwrap()
        })
    });
    let mut won = 0;
    for claim in claims.collect::<Vec<_>>() {
        won += usize::from(claim.await.unwrap());
    }
    assert_eq!(won, 1);
    assert!(
        stores
            .tokens
            .claim_wallet_payment(WalletKind::ApplePay, "AH2Ejtc", T0)
            .await
            .unwrap()
    );
}
