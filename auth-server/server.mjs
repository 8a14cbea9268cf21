// A real OpenID Provider (npm `oidc-provider`, a certified implementation) for Ferry's
// authorization tests. Listens on 127.0.0.1 (port from $PORT, default: any free port) and
// prints one JSON line on stdout once ready: {"issuer": "http://127.0.0.1:PORT"}.
//
// Configured for MCP: resource indicators (RFC 8707) with JWT access tokens whose `aud` is
// the requested resource, client credentials, authorization code with PKCE (S256,
// required), refresh tokens, dynamic client registration (RFC 7591), token introspection
// (RFC 7662) and revocation. Pre-registered clients (see README.md):
//   ferry-service       confidential; client_credentials; secret `ferry-service-secret`
//   ferry-resource      confidential; the resource server's introspection credentials
//   ferry-public        public (PKCE); authorization_code + refresh_token;
//                       redirect URIs http://127.0.0.1/callback (any port, RFC 8252)
// Interactive logins use oidc-provider's built-in development pages (any login name).
// With EVENTS=1 set, token grants, registrations and login/consent pages are reported on
// stdout as JSON lines after the ready line (the reader must then keep reading stdout).

import http from 'node:http';
import { generateKeyPair, exportJWK } from 'jose';
import Provider from 'oidc-provider';

const SCOPES = ['openid', 'offline_access', 'mcp:tools', 'mcp:admin'];
const TOKEN_TTL = Number(process.env.TOKEN_TTL || 300);

const server = http.createServer();
server.listen(Number(process.env.PORT || 0), '127.0.0.1', async () => {
  const issuer = `http://127.0.0.1:${server.address().port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signing = { ...(await exportJWK(privateKey)), kid: 'ferry-test-rs256', alg: 'RS256', use: 'sig' };
  const provider = new Provider(issuer, {
    jwks: { keys: [signing] },
    scopes: SCOPES,
    clients: [
      {
        client_id: 'ferry-service',
        client_secret: 'ferry-service-secret',
        grant_types: ['client_credentials'],
        response_types: [],
        redirect_uris: [],
        scope: 'mcp:tools mcp:admin',
      },
      {
        client_id: 'ferry-resource',
        client_secret: 'ferry-resource-secret',
        grant_types: [],
        response_types: [],
        redirect_uris: [],
      },
      {
        client_id: 'ferry-public',
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        grant_types: ['authorization_code', 'refresh_token'],
        response_types: ['code'],
        redirect_uris: ['http://127.0.0.1/callback'],
        scope: 'openid offline_access mcp:tools mcp:admin',
      },
    ],
    pkce: { required: () => true },
    // A client allowed the refresh_token grant gets a refresh token with its authorization
    // code, as an MCP client expects, without asking for `offline_access` (which
    // oidc-provider otherwise requires, and honours only with `prompt=consent`).
    issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    features: {
      devInteractions: { enabled: true },
      clientCredentials: { enabled: true },
      introspection: { enabled: true },
      revocation: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resourceIndicator) => ({
          scope: 'mcp:tools mcp:admin',
          audience: resourceIndicator,
          accessTokenTTL: TOKEN_TTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    // Introspection answers the resource server only (and not for other clients' tokens).
    introspectionEndpointAuthMethods: ['client_secret_basic'],
  });
  provider.proxy = false;
  if (process.env.EVENTS) {
    // What the tests observe (one JSON line each on stdout, after the ready line): which
    // grants the token endpoint served, which clients registered, which pages a person saw.
    const event = (fields) => process.stdout.write(`${JSON.stringify(fields)}\n`);
    provider.on('grant.success', (ctx) => event({
      event: 'grant',
      grant_type: ctx.oidc.params.grant_type,
      client_id: ctx.oidc.client?.clientId,
      resource: ctx.oidc.params.resource,
      scope: ctx.oidc.params.scope,
    }));
    provider.on('grant.error', (ctx, err) => event({
      event: 'grant_error', grant_type: ctx.oidc.params?.grant_type, error: err.error ?? err.message,
    }));
    provider.on('registration_create.success', (_ctx, client) => event({
      event: 'registration', client_id: client.clientId,
    }));
    provider.on('interaction.started', (_ctx, prompt) => event({
      event: 'interaction', prompt: prompt.name,
    }));
  }
  server.on('request', provider.callback());
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.close(() => process.exit(0)));
}
// The test that started us holds our stdin; when it goes away, so do we.
process.stdin.on('end', () => process.exit(0));
process.stdin.resume();
