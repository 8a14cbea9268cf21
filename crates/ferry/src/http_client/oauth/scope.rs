//! Scope selection, in the specification's order: the configured scopes, else the
//! challenge's `scope`, else the Protected Resource Metadata's `scopes_supported`, else
//! none; plus `offline_access` where the authorization server lists it (SEP-2207).

use super::client::Config;
use super::discovery::Discovered;

/// The scope to ask for (`challenged`: the `scope` of the challenge being answered).
pub(crate) fn select_scope(
    config: &Config,
    discovered: Option<&Discovered>,
    challenged: Option<&str>,
) -> Option<String> {
    let scope = if let Some(scopes) = &config.scopes {
        Some(scopes.join(" "))
    } else if let Some(scope) = challenged.filter(|s| !s.trim().is_empty()) {
        Some(scope.trim().to_owned())
    } else {
        discovered
            .and_then(|d| d.resource_scopes.as_ref())
            .filter(|s| !s.is_empty())
            .map(|s| s.join(" "))
    };
    with_offline_access(config, discovered, scope)
}

/// `scope` plus `offline_access` for the authorization-code grant, when the authorization
/// server lists it and the client asks for refresh tokens.
pub(crate) fn with_offline_access(
    config: &Config,
    discovered: Option<&Discovered>,
    scope: Option<String>,
) -> Option<String> {
    let listed = discovered.is_some_and(|d| {
        d.metadata
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == "offline_access"))
    });
    let has = scope
        .as_deref()
        .is_some_and(|s| s.split_whitespace().any(|x| x == "offline_access"));
    let machine = config.client_credentials_grant || config.identity_assertion.is_some();
    if config.offline_access && !machine && listed && !has {
        Some(match scope {
            Some(s) => format!("{s} offline_access"),
            None => "offline_access".into(),
        })
    } else {
        scope
    }
}
