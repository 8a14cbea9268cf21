//! OAuth for the client commands (`--url`, or `--server` naming an HTTP server): on by
//! default, started by the server's 401. A person approves in a browser (the URL is
//! printed on stderr, a listener on 127.0.0.1 receives the redirect); a machine uses the
//! client-credentials grant. Tokens are kept between runs in a private directory, keyed by
//! authorization server and MCP server.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::Args;
use ferry::http_client::oauth::{
    ClientCredentials, FileTokenStore, LoopbackAuthorizer, MemoryTokenStore, OAuthClient,
    TokenStore,
};

use super::output;

/// How long before its expiry a token is refreshed: a command asks for the token right
/// before each request, so this covers the request's way and clocks a little apart.
const REFRESH_MARGIN: Duration = Duration::from_secs(5);

/// The authorization options of the client commands (they apply with `--url`, or with
/// `--server` naming an HTTP server).
#[derive(Args, Clone, Debug, Default)]
#[command(next_help_heading = "Authorization (with --url or an HTTP --server)")]
pub(crate) struct AuthArgs {
    /// Never authorize: send no token (a server that wants one refuses the command).
    #[arg(long, requires = "remote", conflicts_with = "command")]
    no_auth: bool,
    /// Use this pre-registered OAuth client instead of registering one dynamically.
    #[arg(
        long,
        value_name = "ID",
        requires = "remote",
        conflicts_with = "command",
        conflicts_with = "no_auth"
    )]
    client_id: Option<String>,
    /// The pre-registered client's secret (default: $FERRY_CLIENT_SECRET, if set).
    #[arg(long, value_name = "SECRET", requires = "client_id")]
    client_secret: Option<String>,
    /// Identify this client by the URL of its Client ID Metadata Document (used with
    /// authorization servers that support them).
    #[arg(long, value_name = "URL", requires = "remote", conflicts_with = "command", conflicts_with_all = ["no_auth", "client_id"])]
    client_metadata_url: Option<String>,
    /// Ask for this scope instead of what the server suggests (repeatable, or several
    /// separated by spaces).
    #[arg(
        long = "scope",
        value_name = "SCOPE",
        requires = "remote",
        conflicts_with = "command",
        conflicts_with = "no_auth"
    )]
    scopes: Vec<String>,
    /// Keep tokens in this directory (default: $XDG_CONFIG_HOME/ferry/tokens, else
    /// ~/.config/ferry/tokens; files private to the user).
    #[arg(
        long,
        value_name = "DIR",
        requires = "remote",
        conflicts_with = "command"
    )]
    token_store: Option<PathBuf>,
    /// Machine to machine: the client-credentials grant of the client given with
    /// --client-id and --client-secret; no person, no browser.
    #[arg(long, requires = "client_id")]
    client_credentials: bool,
    /// Receive the authorization redirect on this port of 127.0.0.1 (default: any free
    /// one), for an authorization server that only accepts a registered port.
    #[arg(long, value_name = "PORT", requires = "remote", conflicts_with = "command", conflicts_with_all = ["no_auth", "client_credentials"])]
    redirect_port: Option<u16>,
    /// Do not try to open a browser (for the authorization, or `ferry inspect`'s page): only
    /// print the URL.
    #[arg(long)]
    no_browser: bool,
    /// How long to wait for the authorization in the browser, in seconds (default 300).
    #[arg(long, value_name = "SECONDS", requires = "remote", conflicts_with = "command", value_parser = super::seconds)]
    auth_timeout: Option<Duration>,
}

/// What authorizes the requests to `url`: the OAuth client, or why there is none.
pub(crate) enum Authorization {
    /// OAuth, answering the server's challenges.
    OAuth(OAuthClient),
    /// None, for this reason (shown when the server refuses).
    Off(&'static str),
}

impl AuthArgs {
    /// Whether an option that only means something for an HTTP server was given
    /// (`--no-browser` aside: `ferry inspect` takes it for its page).
    pub(crate) fn given(&self) -> bool {
        self.no_auth
            || self.client_id.is_some()
            || self.client_metadata_url.is_some()
            || !self.scopes.is_empty()
            || self.token_store.is_some()
            || self.redirect_port.is_some()
            || self.auth_timeout.is_some()
    }

    /// `--no-browser`: never open a browser (`ferry inspect` honours it for its page too).
    pub(crate) fn no_browser(&self) -> bool {
        self.no_browser
    }

    /// These options as arguments of another `ferry` command.
    pub(crate) fn to_args(&self) -> Vec<String> {
        let mut args = Vec::new();
        let mut value = |name: &str, value: Option<String>| {
            if let Some(value) = value {
                args.extend([format!("--{name}"), value]);
            }
        };
        value("client-id", self.client_id.clone());
        value("client-secret", self.client_secret.clone());
        value("client-metadata-url", self.client_metadata_url.clone());
        for scope in &self.scopes {
            value("scope", Some(scope.clone()));
        }
        value(
            "token-store",
            self.token_store.as_ref().map(|d| d.display().to_string()),
        );
        value("redirect-port", self.redirect_port.map(|p| p.to_string()));
        value(
            "auth-timeout",
            self.auth_timeout.map(|t| t.as_secs_f64().to_string()),
        );
        let flags = [
            (self.no_auth, "--no-auth"),
            (self.client_credentials, "--client-credentials"),
            (self.no_browser, "--no-browser"),
        ];
        args.extend(
            flags
                .into_iter()
                .filter(|(on, _)| *on)
                .map(|(_, flag)| flag.to_owned()),
        );
        args
    }

    /// The authorization for the server at `url`; `header_given`: an `Authorization`
    /// header came with `--header` (it is used as it is, and OAuth stays off).
    pub(crate) fn authorization(
        &self,
        url: &str,
        header_given: bool,
    ) -> Result<Authorization, String> {
        if self.no_auth {
            return Ok(Authorization::Off("--no-auth"));
        }
        if header_given {
            return Ok(Authorization::Off(
                "the Authorization header given with --header (or by the server's entry) was \
                 refused",
            ));
        }
        let mut builder = OAuthClient::builder(url)
            .client_name("ferry")
            .store(self.store())
            .refresh_margin(REFRESH_MARGIN);
        if let Some(id) = &self.client_id {
            let secret = self
                .client_secret
                .clone()
                .or_else(|| std::env::var("FERRY_CLIENT_SECRET").ok())
                .filter(|s| !s.is_empty());
            builder = builder.client_credentials(ClientCredentials {
                client_id: id.clone(),
                client_secret: secret,
                token_endpoint_auth_method: None,
            });
        }
        if let Some(metadata) = &self.client_metadata_url {
            builder = builder.client_metadata_url(metadata);
        }
        let scopes: Vec<&str> = self
            .scopes
            .iter()
            .flat_map(|s| s.split_whitespace())
            .collect();
        if !scopes.is_empty() {
            builder = builder.scopes(&scopes);
        }
        if self.client_credentials {
            builder = builder.client_credentials_grant();
        } else {
            let mut authorizer = LoopbackAuthorizer::new()
                .port(self.redirect_port.unwrap_or(0))
                .open_browser(!self.no_browser);
            if let Some(timeout) = self.auth_timeout {
                authorizer = authorizer.timeout(timeout);
            }
            builder = builder.authorizer(Arc::new(authorizer));
        }
        builder
            .build()
            .map(Authorization::OAuth)
            .map_err(|e| e.to_string())
    }

    /// The token store: the directory given, else the user's; in memory when there is
    /// no home to find.
    fn store(&self) -> Arc<dyn TokenStore> {
        match self
            .token_store
            .clone()
            .or_else(FileTokenStore::default_dir)
        {
            Some(dir) => Arc::new(FileTokenStore::new(dir)),
            None => {
                output::note(
                    "ferry: no $XDG_CONFIG_HOME or $HOME: tokens are kept for this command \
                     only (see --token-store)",
                );
                Arc::new(MemoryTokenStore::default())
            }
        }
    }
}
