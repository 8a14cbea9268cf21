//! A shared session's application data in the session store, so every instance reads and
//! updates the same values: the [`DataShare`] each shared session's engine gets.

use std::sync::Arc;

use ferry_protocol::jsonrpc::ErrorObject;
use futures_util::future::BoxFuture;

use crate::engine::{DataEntry, DataSaved, DataShare};
use crate::http::store::SessionStore;

/// The data of one shared session.
pub(super) struct StoreData {
    pub(super) store: Arc<dyn SessionStore>,
    pub(super) session: String,
}

fn gone() -> ErrorObject {
    ErrorObject::invalid_request("the session has ended or expired: its data is gone")
}

impl DataShare for StoreData {
    fn load<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<DataEntry, ErrorObject>> {
        Box::pin(async move {
            match self.store.load_data(&self.session, key).await {
                Ok(Some(entry)) => Ok(entry),
                Ok(None) => Err(gone()),
                Err(error) => Err(super::shared::store_error(&error)),
            }
        })
    }

    fn save<'a>(
        &'a self,
        key: &'a str,
        version: u64,
        json: &'a str,
        max_bytes: usize,
    ) -> BoxFuture<'a, Result<DataSaved, ErrorObject>> {
        Box::pin(async move {
            match self
                .store
                .save_data(&self.session, key, version, json, max_bytes)
                .await
            {
                Ok(Some(saved)) => Ok(saved),
                Ok(None) => Err(gone()),
                Err(error) => Err(super::shared::store_error(&error)),
            }
        })
    }
}
