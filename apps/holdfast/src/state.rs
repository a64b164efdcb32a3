//! Wiring: the domain services over the stores of one open database.

use std::sync::Arc;

use holdfast_domain::ports::{Clock, Ids, KeyStore, MerchantStore, PlatformStore, UserStore};
use holdfast_domain::services::{
    Authenticator, KeyService, MerchantService, PlatformService, UserService,
};
use holdfast_persistence::Database;

use crate::system::{RandomIds, SystemClock};

type Shared<T> = Arc<T>;
type DynClock = Shared<dyn Clock>;
type DynIds = Shared<dyn Ids>;

/// Everything a request handler or an operator command needs.
#[derive(Clone)]
pub struct AppState {
    pub database: Database,
    pub auth: Authenticator<Shared<dyn KeyStore>, DynClock>,
    pub platforms: PlatformService<Shared<dyn PlatformStore>, DynClock, DynIds>,
    pub users: UserService<Shared<dyn UserStore>, Shared<dyn PlatformStore>, DynClock, DynIds>,
    pub keys: KeyService<Shared<dyn KeyStore>, Shared<dyn UserStore>, DynClock, DynIds>,
    pub merchants: MerchantService<Shared<dyn MerchantStore>, DynClock, DynIds>,
}

impl std::fmt::Debug for AppState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AppState")
            .field("database", &self.database)
            .finish_non_exhaustive()
    }
}

impl AppState {
    pub fn new(database: Database) -> Self {
        let clock: DynClock = Arc::new(SystemClock);
        let ids: DynIds = Arc::new(RandomIds::default());
        let stores = database.stores();
        Self {
            auth: Authenticator::new(stores.keys.clone(), clock.clone()),
            platforms: PlatformService::new(stores.platforms.clone(), clock.clone(), ids.clone()),
            users: UserService::new(
                stores.users.clone(),
                stores.platforms.clone(),
                clock.clone(),
                ids.clone(),
            ),
            keys: KeyService::new(stores.keys, stores.users, clock.clone(), ids.clone()),
            merchants: MerchantService::new(stores.merchants, clock, ids),
            database,
        }
    }
}
