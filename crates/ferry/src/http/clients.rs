//! The per-client session limit ([`HttpConfig::max_sessions_per_client`]): who a new
//! session belongs to, and how many live sessions each client holds.
//!
//! **The client.** A request's [`SessionOwner`](super::SessionOwner) when an
//! authentication layer set one (the `http-auth` layer: the token's principal); otherwise
//! the address the connection came from, which [`serve`](super::serve) puts in every
//! request as axum's [`ConnectInfo`]. An IPv6 address counts by its /64 (one host usually
//! holds a whole /64). When the connection comes from one of
//! [`HttpConfig::trusted_proxies`], the address is the rightmost `X-Forwarded-For` entry
//! that is not a trusted proxy itself. A request with neither (a [`router`](super::router)
//! mounted in an application that provides no `ConnectInfo`, and no owner) is not counted.
//!
//! **Counting.** A slot is taken when a session starts (`initialize`, or `GET` on the
//! HTTP+SSE path) and given back when it leaves the table, whatever ends it (DELETE, its
//! stream closing, expiry, eviction, shutdown). Sessions adopted from a shared session
//! store take none: the limit counts the sessions this instance started and holds.

use std::collections::HashMap;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use ferry_protocol::jsonrpc::ErrorObject;

use super::owner::RequestData;
use super::stateless::error_response;
use super::{HttpConfig, Shared};

/// Who a session is counted against.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(crate) enum ClientKey {
    /// The request's [`SessionOwner`].
    Principal(Arc<str>),
    /// The client's address (an IPv6 one cut to its /64).
    Address(IpAddr),
}

impl ClientKey {
    /// The client of a request (`data`: its owner and peer address, `headers`), if it can
    /// be told (see the module docs).
    pub(crate) fn of(
        config: &HttpConfig,
        data: &RequestData,
        headers: &HeaderMap,
    ) -> Option<ClientKey> {
        if let Some(owner) = &data.owner {
            return Some(ClientKey::Principal(Arc::clone(&owner.0)));
        }
        let peer = data.peer?;
        let address = client_address(&config.trusted_proxies, peer, headers);
        Some(ClientKey::Address(match address {
            IpAddr::V6(v6) => {
                let [a, b, c, d, ..] = v6.segments();
                IpAddr::V6(Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
            }
            v4 => v4,
        }))
    }
}

/// The client's address: `peer`, or when `peer` is a trusted proxy, the rightmost
/// `X-Forwarded-For` entry that is not one (entries left of it are whatever the client
/// wrote). An entry that is no address ends the search at the last trusted one.
fn client_address(trusted: &[IpAddr], peer: IpAddr, headers: &HeaderMap) -> IpAddr {
    let peer = peer.to_canonical();
    if !trusted.contains(&peer) {
        return peer;
    }
    // Every `X-Forwarded-For` line, in order: their entries form one list.
    let lines: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .map(|v| v.to_str().unwrap_or(""))
        .collect();
    let mut client = peer;
    for entry in lines.iter().rev().flat_map(|line| line.rsplit(',')) {
        let entry = entry.trim();
        let Some(address) = entry
            .parse::<IpAddr>()
            .ok()
            .or_else(|| entry.parse::<SocketAddr>().ok().map(|s| s.ip()))
        else {
            break;
        };
        client = address.to_canonical();
        if !trusted.contains(&client) {
            break;
        }
    }
    client
}

/// How many live sessions each client holds.
#[derive(Default)]
pub(crate) struct ClientCounts(Mutex<HashMap<ClientKey, usize>>);

/// One live session of a client; given back when dropped.
pub(crate) struct ClientSlot {
    counts: Arc<ClientCounts>,
    key: ClientKey,
}

impl ClientSlot {
    pub(crate) fn key(&self) -> &ClientKey {
        &self.key
    }
}

impl ClientCounts {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<ClientKey, usize>> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A slot for `key`, unless it holds `limit` already.
    fn take(self: &Arc<Self>, key: &ClientKey, limit: usize) -> Option<ClientSlot> {
        let mut map = self.map();
        let held = map.entry(key.clone()).or_insert(0);
        if *held >= limit {
            if *held == 0 {
                map.remove(key);
            }
            return None;
        }
        *held += 1;
        Some(ClientSlot {
            counts: Arc::clone(self),
            key: key.clone(),
        })
    }

    /// How many live sessions `key` holds.
    #[cfg(test)]
    fn held(&self, key: &ClientKey) -> usize {
        self.map().get(key).copied().unwrap_or(0)
    }
}

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut map = self.counts.map();
        if let Some(held) = map.get_mut(&self.key) {
            *held = held.saturating_sub(1);
            if *held == 0 {
                map.remove(&self.key);
            }
        }
    }
}

/// A slot for a new session of the client `key` (none when the client cannot be told).
/// At the limit, the client's own expired sessions and its quietest session unused since
/// `initialize` (past [`HttpConfig::unused_session_grace`]) make room first; then 429.
// The refusal is a whole HTTP response, returned once per new session: its size does not
// matter.
#[allow(clippy::result_large_err)]
pub(crate) fn admit(
    shared: &Shared,
    key: Option<ClientKey>,
) -> Result<Option<ClientSlot>, Response> {
    let Some(key) = key else {
        return Ok(None);
    };
    let limit = shared.config.max_sessions_per_client;
    if let Some(slot) = shared.clients.take(&key, limit) {
        return Ok(Some(slot));
    }
    super::session::make_room_for(shared, &key);
    match shared.clients.take(&key, limit) {
        Some(slot) => Ok(Some(slot)),
        None => Err(error_response(
            StatusCode::TOO_MANY_REQUESTS,
            None,
            ErrorObject::invalid_request(format!(
                "too many sessions for one client (limit {limit} per client: \
                 max_sessions_per_client); end one (DELETE, or close its SSE stream) or try \
                 again later"
            )),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn forwarded(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append("x-forwarded-for", value.parse().unwrap());
        }
        headers
    }

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn forwarded_for_is_read_only_from_trusted_proxies() {
        let proxy = ip("10.0.0.1");
        let headers = forwarded(&["6.6.6.6, 1.2.3.4"]);
        // Not trusted: the header is the client's own words.
        assert_eq!(client_address(&[], proxy, &headers), proxy);
        // Trusted: the entry the proxy appended, not the one the client wrote.
        assert_eq!(client_address(&[proxy], proxy, &headers), ip("1.2.3.4"));
        // A chain of trusted proxies is walked through.
        let chain = [proxy, ip("10.0.0.2")];
        let headers = forwarded(&["6.6.6.6, 1.2.3.4", "10.0.0.2"]);
        assert_eq!(client_address(&chain, proxy, &headers), ip("1.2.3.4"));
        // Ports, IPv6 and IPv4-mapped addresses.
        let headers = forwarded(&["[2001:db8::1]:443, 1.2.3.4:80"]);
        assert_eq!(client_address(&[proxy], proxy, &headers), ip("1.2.3.4"));
        let headers = forwarded(&["::ffff:1.2.3.4"]);
        assert_eq!(client_address(&[proxy], proxy, &headers), ip("1.2.3.4"));
        // Nothing readable: the proxy itself.
        assert_eq!(client_address(&[proxy], proxy, &HeaderMap::new()), proxy);
        let headers = forwarded(&["1.2.3.4, unknown"]);
        assert_eq!(client_address(&[proxy], proxy, &headers), proxy);
    }

    #[test]
    fn ipv6_clients_count_by_their_64() {
        let config = HttpConfig::default();
        let key = |address: &str| {
            let data = RequestData {
                peer: Some(ip(address)),
                ..RequestData::default()
            };
            ClientKey::of(&config, &data, &HeaderMap::new())
        };
        assert_eq!(key("2001:db8::1"), key("2001:db8::ffff:2"));
        assert_ne!(key("2001:db8::1"), key("2001:db8:0:1::1"));
        assert_eq!(key("::ffff:1.2.3.4"), key("1.2.3.4"));
        assert_eq!(key("1.2.3.4"), Some(ClientKey::Address(ip("1.2.3.4"))));
        // An owner counts before the address; neither: not counted.
        let owned = RequestData {
            owner: Some(crate::http::SessionOwner("alice".into())),
            peer: Some(ip("1.2.3.4")),
            ..RequestData::default()
        };
        assert_eq!(
            ClientKey::of(&config, &owned, &HeaderMap::new()),
            Some(ClientKey::Principal("alice".into()))
        );
        assert_eq!(
            ClientKey::of(&config, &RequestData::default(), &HeaderMap::new()),
            None
        );
    }

    #[test]
    fn slots_are_given_back() {
        let counts = Arc::new(ClientCounts::default());
        let key = ClientKey::Address(ip("1.2.3.4"));
        let a = counts.take(&key, 2).unwrap();
        let b = counts.take(&key, 2).unwrap();
        assert!(counts.take(&key, 2).is_none());
        assert!(counts.take(&ClientKey::Address(ip("1.2.3.5")), 2).is_some());
        drop(a);
        assert_eq!(counts.held(&key), 1);
        let c = counts.take(&key, 2).unwrap();
        drop((b, c));
        assert_eq!(counts.held(&key), 0);
        assert!(counts.map().is_empty(), "no entry is left behind");
        assert!(counts.take(&key, 0).is_none());
        assert!(counts.map().is_empty());
    }
}
