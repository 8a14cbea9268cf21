//! Binding session-era sessions to the principal that started them.

use std::sync::Arc;

use axum::http::{Extensions, HeaderMap};

use super::HttpConfig;
use super::clients::ClientKey;
use crate::engine::{Attachment, ClientAddress};

/// Who a request acts for, as an authentication layer established it (a request
/// extension; the `http-auth` layer sets it to the token's issuer, subject and client).
///
/// A session started by a request with an owner serves requests of that same owner only:
/// any other request naming its `MCP-Session-Id` gets 404, as if the session did not
/// exist, so a leaked session id is useless without the owner's credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionOwner(pub Arc<str>);

/// What a request carries for the engine and the session table.
#[derive(Clone, Debug, Default)]
pub(crate) struct RequestData {
    pub(crate) owner: Option<SessionOwner>,
    pub(crate) attachment: Option<Attachment>,
    /// The connection's peer address (axum's `ConnectInfo`, which `serve` sets).
    pub(crate) peer: Option<std::net::IpAddr>,
}

impl RequestData {
    /// Read the request's [`SessionOwner`], [`Attachment`] and `ConnectInfo` extensions;
    /// without an owner or an attachment, the client's address is attached
    /// ([`ClientAddress`]), so that a server tells its callers apart without
    /// authentication too.
    pub(crate) fn of(
        config: &HttpConfig,
        extensions: &Extensions,
        headers: &HeaderMap,
    ) -> RequestData {
        let mut data = RequestData {
            owner: extensions.get::<SessionOwner>().cloned(),
            attachment: extensions.get::<Attachment>().cloned(),
            peer: extensions
                .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
                .map(|info| info.0.ip()),
        };
        if data.attachment.is_none() {
            data.attachment = anonymous(config, &data, headers);
        }
        data
    }
}

/// The [`ClientAddress`] attachment of a request without an owner, when its address is
/// known.
fn anonymous(config: &HttpConfig, data: &RequestData, headers: &HeaderMap) -> Option<Attachment> {
    if data.owner.is_some() {
        return None;
    }
    match ClientKey::of(config, data, headers)? {
        ClientKey::Address(address) => Some(Attachment::new(ClientAddress(address))),
        ClientKey::Principal(_) => None,
    }
}
