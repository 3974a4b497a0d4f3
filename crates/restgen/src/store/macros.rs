//! The store's two macros: a body run on whichever native pool the store has, once per
//! driver, and the same in this instance's turn to write.

/// Runs `$body` with `$pool` bound to whichever native pool the store has; the body is
/// compiled once per driver.
macro_rules! on_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match &$store.pool {
            #[cfg(feature = "sqlite")]
            $crate::store::Pool::Sqlite($pool) => $body,
            #[cfg(feature = "postgres")]
            $crate::store::Pool::Postgres($pool) => $body,
        }
    };
}

/// Runs `$body` as `on_pool!` does, in this instance's turn to write ([`Store::write_permit`]):
/// every statement or transaction that writes runs so.
macro_rules! writing {
    ($store:expr, $pool:ident => $body:expr) => {{
        let _turn = $store.write_permit().await?;
        on_pool!($store, $pool => $body)
    }};
}
