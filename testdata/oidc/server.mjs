// A certified OpenID provider (oidc-provider) in front of an MCP server built on the official
// TypeScript SDK, both on loopback, for mcptask's OAuth tests (cmd/oidc_test.go): what a user
// meets who puts an MCP server behind their organisation's identity provider.
//
// The provider is configured as such deployments are: Dynamic Client Registration, PKCE,
// resource indicators (RFC 8707) with JWT access tokens whose audience is the MCP server,
// offline_access under OpenID Connect Core §11, rotating refresh tokens, token revocation
// (RFC 7009), and its login and consent kept in cookies across redirects.
//
// The one thing that differs from a production provider is the login page. Instead of a form
// a person fills in, its interaction endpoint signs in a fixed account and grants what was
// asked, at once, the way a single sign-on provider does for a user it already knows
// (Kerberos, a client certificate, a corporate network). A client that completes this login
// needs exactly what a browser gives every login without any person: it keeps the cookies the
// provider sets and follows its redirects. The provider's own state checks (the interaction
// and resume cookies) run unchanged.
//
// The MCP server uses the SDK's own pieces: mcpAuthMetadataRouter for the protected resource
// metadata, requireBearerAuth with expectedResource for the bearer check, and a verifier that
// checks the JWT's signature against the provider's JWKS, its issuer and its audience.
//
// Output: one JSON line {"issuer":…,"mcp":…} once both listen, then one JSON line per provider
// event ({"event":"grant.success","grant_type":…}, …) and per request that carried a cookie
// where none belongs ({"event":"cookie","at":path}), for the tests to count.
import http from 'node:http';

import Provider from 'oidc-provider';
import express from 'express';
import * as jose from 'jose';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import { mcpAuthMetadataRouter, getOAuthProtectedResourceMetadataUrl } from '@modelcontextprotocol/sdk/server/auth/router.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import * as z from 'zod/v4';

const SCOPE = 'mcp:tools';
const ACCOUNT = 'test-user';

function emit(obj) {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}

function listen(server) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve(server.address().port));
  });
}

const opServer = http.createServer();
const rsServer = http.createServer();
const issuer = `http://127.0.0.1:${await listen(opServer)}`;
const mcpURL = `http://127.0.0.1:${await listen(rsServer)}/mcp`;
const accessTokenTTL = Number(process.env.OIDC_ACCESS_TOKEN_TTL || 600);

// The provider's signing key, made fresh for each run.
const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
const signingKey = { ...(await jose.exportJWK(privateKey)), kid: 'test', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  jwks: { keys: [signingKey] },
  cookies: { keys: [jose.base64url.encode(crypto.getRandomValues(new Uint8Array(32)))] },
  scopes: ['openid', 'offline_access'],
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf ?? mcpURL,
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resourceIndicator) => {
        if (resourceIndicator !== mcpURL) {
          throw new Provider.errors.InvalidTarget();
        }
        return {
          scope: SCOPE,
          audience: mcpURL,
          accessTokenTTL,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  ttl: {
    AccessToken: accessTokenTTL,
    RefreshToken: 24 * 60 * 60,
    Grant: 24 * 60 * 60,
    Session: 24 * 60 * 60,
    Interaction: 10 * 60,
  },
});

for (const name of ['grant.success', 'grant.error', 'grant.revoked', 'authorization.success', 'authorization.error',
  'registration_create.success', 'revocation.error', 'refresh_token.consumed', 'refresh_token.destroyed']) {
  provider.on(name, (ctx, arg) => {
    const e = { event: name };
    const params = ctx?.oidc?.params || {};
    for (const k of ['grant_type', 'prompt', 'scope', 'resource']) {
      if (params[k]) e[k] = params[k];
    }
    if (arg instanceof Error) e.error = arg.error || arg.message;
    emit(e);
  });
}

// Cookies belong to the browser's hops between the provider's pages: a client that sends
// them to the token or revocation endpoint, or to the MCP server, shares its login session.
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.get('cookie')) emit({ event: 'cookie', at: ctx.path });
  await next();
});

// The interaction endpoint: sign in ACCOUNT, then grant what the client asked for. Every step
// needs the provider's interaction cookie (interactionDetails reads it) and ends in a 303 to
// the provider's resume endpoint, which needs its resume cookie.
const op = express();
op.get('/interaction/:uid', async (req, res, next) => {
  try {
    const details = await provider.interactionDetails(req, res);
    const { prompt, params } = details;
    if (prompt.name === 'login') {
      await provider.interactionFinished(req, res, { login: { accountId: ACCOUNT } }, { mergeWithLastSubmission: false });
      return;
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: ACCOUNT, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    if (missing.missingResourceScopes) {
      for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes)) {
        grant.addResourceScope(indicator, scopes.join(' '));
      }
    }
    const grantId = await grant.save();
    const consent = details.grantId ? {} : { grantId };
    await provider.interactionFinished(req, res, { consent }, { mergeWithLastSubmission: true });
  } catch (err) {
    next(err);
  }
});
op.use(provider.callback());
opServer.on('request', op);

// The MCP server, on the TypeScript SDK.
const metadata = await (await fetch(`${issuer}/.well-known/openid-configuration`)).json();
const jwks = jose.createLocalJWKSet(await (await fetch(metadata.jwks_uri)).json());

const verifier = {
  async verifyAccessToken(token) {
    let payload;
    try {
      ({ payload } = await jose.jwtVerify(token, jwks, { issuer, audience: mcpURL, typ: 'at+jwt' }));
    } catch (err) {
      throw new InvalidTokenError(`invalid access token: ${err.code || err.message}`);
    }
    return {
      token,
      clientId: payload.client_id,
      scopes: String(payload.scope || '').split(' ').filter(Boolean),
      expiresAt: payload.exp,
      resource: new URL(String(payload.aud)),
      extra: { sub: payload.sub },
    };
  },
};

function mcpServer() {
  const server = new McpServer({ name: 'oidc-protected', version: '1.0.0' });
  server.registerTool('whoami', {
    description: 'Says who the bearer token was issued to, and for which audience',
    inputSchema: {},
  }, async (_args, extra) => ({
    content: [{ type: 'text', text: `sub=${extra.authInfo?.extra?.sub} client=${extra.authInfo?.clientId} resource=${extra.authInfo?.resource}` }],
  }));
  server.registerTool('echo', {
    description: 'Echoes its text',
    inputSchema: { text: z.string() },
  }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
}

const rs = createMcpExpressApp({ host: '127.0.0.1' });
rs.use((req, _res, next) => {
  if (req.headers.cookie) emit({ event: 'cookie', at: req.path });
  next();
});
rs.use(mcpAuthMetadataRouter({
  oauthMetadata: metadata,
  resourceServerUrl: new URL(mcpURL),
  scopesSupported: [SCOPE],
  resourceName: 'mcptask OIDC test server',
}));
const bearer = requireBearerAuth({
  verifier,
  requiredScopes: [SCOPE],
  resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(new URL(mcpURL)),
  expectedResource: new URL(mcpURL),
});
rs.post('/mcp', bearer, async (req, res) => {
  const server = mcpServer();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    transport.close();
    server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res, req.body);
});
rs.all('/mcp', bearer, (_req, res) => {
  res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed.' }, id: null });
});
rsServer.on('request', rs);

emit({ issuer, mcp: mcpURL });
