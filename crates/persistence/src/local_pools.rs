//! PostgreSQL pools: one per thread that runs a single-threaded runtime of its own (each HTTP
//! worker, each delivery loop), one shared by the rest (the multi-threaded runtime: mail,
//! retention, reconciliation, commands).
//!
//! A connection's driver task runs on the runtime that opened it. When an HTTP worker used a
//! connection opened on another worker, every message woke that other thread and was woken
//! back by it: about eleven context switches per auth, measured. With a pool of its own, a
//! worker drives its connections itself: about three (docs/performance.md).
//!
//! A delivery loop's pool is made for the work it does (`PinnedWork`, which the store handle it
//! was given says: `Database::for_deliveries`): its connections keep the generic plans of the
//! few statements it runs over and over (`database::connect::DELIVERY_PLANNING`).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::thread::ThreadId;

use diesel_async::AsyncPgConnection;
use diesel_async::pooled_connection::deadpool::Pool;
use tokio::runtime::{Handle, RuntimeFlavor};

type PgPool = Pool<AsyncPgConnection>;

/// What a pinned thread's connections run, which decides how they are set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PinnedWork {
    /// API requests: any statement the application has.
    Requests,
    /// A delivery loop: claims, outcomes and failure counts.
    Deliveries,
}

/// Whether this thread runs a single-threaded runtime of its own (an HTTP worker, a delivery
/// loop): what it starts on it stays on it.
pub fn on_pinned_thread() -> bool {
    Handle::try_current()
        .is_ok_and(|runtime| runtime.runtime_flavor() == RuntimeFlavor::CurrentThread)
}

/// The shared pool, each pinned thread's, and how to make one for a thread that has none yet.
/// Dropping the last clone closes them all.
#[derive(Clone)]
pub struct PgPools {
    shared: PgPool,
    pinned: Arc<RwLock<HashMap<(ThreadId, PinnedWork), PgPool>>>,
    make_pinned: Arc<dyn Fn(PinnedWork) -> PgPool + Send + Sync>,
}

impl PgPools {
    pub fn new(
        shared: PgPool,
        make_pinned: impl Fn(PinnedWork) -> PgPool + Send + Sync + 'static,
    ) -> Self {
        Self {
            shared,
            pinned: Arc::default(),
            make_pinned: Arc::new(make_pinned),
        }
    }

    /// The pool this thread's connections for `work` come from: its own when it runs a
    /// single-threaded runtime (made on first use), the shared one otherwise.
    pub fn for_this_thread(&self, work: PinnedWork) -> PgPool {
        if !on_pinned_thread() {
            return self.shared.clone();
        }
        let key = (std::thread::current().id(), work);
        if let Some(pool) = self.read().get(&key) {
            return pool.clone();
        }
        let mut pools = self
            .pinned
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        pools
            .entry(key)
            .or_insert_with(|| (self.make_pinned)(work))
            .clone()
    }

    /// How many connections are open, in all the pools.
    pub fn open(&self) -> usize {
        self.read()
            .values()
            .fold(self.shared.status().size, |open, p| {
                open.saturating_add(p.status().size)
            })
    }

    /// Every pool's status: the shared one's, then each pinned thread's.
    pub fn statuses(&self) -> Vec<deadpool::Status> {
        let mut statuses = vec![self.shared.status()];
        statuses.extend(self.read().values().map(Pool::status));
        statuses
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<(ThreadId, PinnedWork), PgPool>> {
        // A panic while the map was held cannot leave it half-changed: entries are only added.
        self.pinned
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use diesel_async::pooled_connection::AsyncDieselConnectionManager;

    fn pool() -> PgPool {
        // Connections are opened lazily: a pool to nowhere is enough to tell pools apart.
        let manager = AsyncDieselConnectionManager::<AsyncPgConnection>::new(
            "postgres://nobody@127.0.0.1:1/none",
        );
        Pool::builder(manager).max_size(1).build().unwrap()
    }

    fn same(a: &PgPool, b: &PgPool) -> bool {
        // A pool is a handle: clones share one inner pool, whose address tells it apart.
        std::ptr::eq(
            std::ptr::from_ref(a.manager()),
            std::ptr::from_ref(b.manager()),
        )
    }

    #[test]
    fn a_single_threaded_runtime_gets_a_pool_of_its_own_and_keeps_it() {
        let pools = PgPools::new(pool(), |_| pool());
        let on_own_runtime = || {
            let pools = pools.clone();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                runtime.block_on(async {
                    (
                        pools.for_this_thread(PinnedWork::Requests),
                        pools.for_this_thread(PinnedWork::Requests),
                    )
                })
            })
            .join()
            .unwrap()
        };
        let (a1, a2) = on_own_runtime();
        let (b1, _) = on_own_runtime();
        assert!(same(&a1, &a2), "one thread, one pool");
        assert!(!same(&a1, &b1), "each thread its own");
        assert!(!same(&a1, &pools.shared));
    }

    #[test]
    fn a_delivery_loops_thread_gets_a_pool_made_for_deliveries() {
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let pools = PgPools::new(pool(), {
            let asked = Arc::clone(&asked);
            move |work| {
                asked.lock().unwrap().push(work);
                pool()
            }
        });
        let on_own_runtime = |work: PinnedWork| {
            let pools = pools.clone();
            std::thread::spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .build()
                    .unwrap();
                runtime.block_on(async { pools.for_this_thread(work) })
            })
            .join()
            .unwrap()
        };
        on_own_runtime(PinnedWork::Requests);
        on_own_runtime(PinnedWork::Deliveries);
        assert_eq!(
            *asked.lock().unwrap(),
            [PinnedWork::Requests, PinnedWork::Deliveries]
        );
    }

    #[test]
    fn the_multi_threaded_runtime_and_plain_threads_share_one_pool() {
        let pools = PgPools::new(pool(), |_| pool());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .build()
            .unwrap();
        let on_runtime = runtime.block_on({
            let pools = pools.clone();
            async move {
                tokio::spawn(async move { pools.for_this_thread(PinnedWork::Requests) })
                    .await
                    .unwrap()
            }
        });
        assert!(same(&on_runtime, &pools.shared));
        assert!(same(
            &pools.for_this_thread(PinnedWork::Requests),
            &pools.shared
        ));
        assert!(pools.read().is_empty());
    }
}
