// One OAuth 2.1 authorization server per organisation (docs/authentication.md#oauth-2), an oidc-provider Provider whose
// issuer is the organisation's public origin. What oidc-provider is asked to do, and why:
// - authorization code with PKCE S256 required for every client; client credentials; refresh tokens issued with
//   every code and rotated on each use (a reused one revokes its grant, which oidc-provider does itself);
// - resource indicators (RFC 8707): `{origin}/api/v1` (the default) and `{origin}/mcp`, opaque one-hour tokens;
// - sign-in is ours: the login prompt is asked whenever the person signed in at this address (our session) is
//   not the one oidc-provider remembers, so signing out of Atrium is signing out of the authorization server;
// - consent is ours too (the consent page) and remembered per (person, client, scopes): the newest grant the
//   person gave the client is loaded, and only scopes it lacks are asked for;
// - storage is our database (adapter.ts), shared by every server process.
import Provider, { errors, interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { Organisation } from '../../domain/organisations/organisations.repository.ts';
import type { PeopleService } from '../../domain/people/people.service.ts';
import { ApiError } from '../../errors/api-error.ts';
import { problemBody } from '../../errors/problems.ts';
import { publicOrigin, type PublicOriginSettings } from '../../public-origin.ts';
import { scopes as allScopes } from '../../access/capabilities.ts';
import { ACCESS_TOKEN_PREFIX, createAdapterFactory } from './adapter.ts';
import type { OAuthClientStore } from './client-store.ts';
import type { MetadataDocumentFetch } from './client-id-metadata.ts';
import { generateClientId } from './clients.service.ts';
import { oauthRecordsRepository } from './oauth-records.repository.ts';
import { resourcesOf } from './resources.ts';

export const ACCESS_TOKEN_TTL_S = 3600;

/** What our HTTP layer tells the provider about a request (set on the raw request before it is handed over). */
export interface ProviderRequestFacts {
  /** The person signed in at this address by our session, if any. */
  atriumPersonId?: string;
}

export interface AuthorizationServerDeps {
  db: Db;
  clock: Clock;
  people: PeopleService;
  clients: OAuthClientStore;
  publicOrigin: PublicOriginSettings;
  /** Deployment secrets: signs the provider's cookies; signs anything it signs (ES256). */
  cookieKey: string;
  signingJwk: Record<string, unknown>;
  /** Whether the organisation lets clients register themselves (and name themselves by a metadata document). */
  selfRegistrationAllowed(org: Organisation): Promise<boolean>;
  /** Fetches a Client ID Metadata Document through the SSRF guard. */
  fetchMetadataDocument: MetadataDocumentFetch;
  /** Where problem documents point (an unknown route inside the provider is one, as everywhere else). */
  errorsUrl: string;
  /** Renders an error the provider cannot send back to the client (e.g. an unregistered redirect_uri). */
  renderError(error: { error: string; error_description?: string }): Promise<string>;
}

const factsOf = (ctx: KoaContextWithOIDC): ProviderRequestFacts => (ctx.req as unknown as { atrium?: ProviderRequestFacts }).atrium ?? {};

export function createAuthorizationServer(org: Organisation, deps: AuthorizationServerDeps): Provider {
  const issuer = publicOrigin(deps.publicOrigin, org.address);
  const resources = resourcesOf(issuer);
  const secure = issuer.startsWith('https:');

  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('atrium_session', 'The person signed in at this address is another one, or nobody', (ctx) =>
      factsOf(ctx).atriumPersonId !== ctx.oidc.session?.accountId ? interactionPolicy.Check.REQUEST_PROMPT : interactionPolicy.Check.NO_NEED_TO_PROMPT,
    ),
  );

  const configuration: Configuration = {
    adapter: createAdapterFactory({ db: deps.db, clock: deps.clock, organisationId: org.id, clients: deps.clients }),
    clients: [],
    async findAccount(_ctx, sub) {
      const person = await deps.people.findById(org.id, sub);
      return person ? { accountId: person.id, claims: async () => ({ sub: person.id }) } : undefined;
    },
    jwks: { keys: [deps.signingJwk as never] },
    cookies: {
      keys: [deps.cookieKey],
      long: { signed: true, httpOnly: true, sameSite: 'lax', secure },
      short: { signed: true, httpOnly: true, sameSite: 'lax', secure },
      names: { session: 'atrium_oauth_session', interaction: 'atrium_oauth_interaction', resume: 'atrium_oauth_resume' },
    },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      revocation: '/oauth/revoke',
      introspection: '/oauth/introspect',
      registration: '/oauth/register',
      jwks: '/oauth/jwks',
      userinfo: '/oauth/userinfo',
      end_session: '/oauth/end_session',
      pushed_authorization_request: '/oauth/par',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
    },
    responseTypes: ['code'],
    // Our scopes are the server's scopes, so a client's registered `scope` is an allow-list (invalid_scope beyond it).
    scopes: [...allScopes],
    // Secrets are kept hashed, so a client proves itself by presenting its secret (Basic or in the body), never by
    // an HMAC keyed with it (client_secret_jwt).
    clientAuthMethods: ['client_secret_basic', 'client_secret_post', 'none'],
    pkce: { required: () => true },
    clientDefaults: { grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'none', id_token_signed_response_alg: 'ES256' },
    enabledJWA: { idTokenSigningAlgValues: ['ES256'] },
    features: {
      devInteractions: { enabled: false },
      // Bearer tokens only: the REST API and /mcp do not check DPoP proofs, so no token may be bound to one.
      dPoP: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      userinfo: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      clientCredentials: { enabled: true },
      revocation: {
        enabled: true,
        // A client revokes only its own tokens. RFC 7009 2.1: the server checks that the token was issued to the
        // client making the request and, if not, refuses the request and tells the client (2.2.1: an RFC 6749
        // error), so the answer is 400 invalid_request and the token stays valid. oidc-provider 9's default says
        // the same to a confidential client but answers a public one 200 as for an unknown token; a public client
        // is told too, since the answer reveals nothing the token itself does not (whoever holds it can use it).
        allowedPolicy: async (_ctx, client, token) => {
          if (token.clientId === client.clientId) return true;
          throw new errors.InvalidRequest('this token was not issued to this client; a client may revoke only its own tokens');
        },
      },
      introspection: {
        enabled: true,
        // docs/authentication.md#oauth-2: for confidential clients of the organisation (a public client has nothing to prove it with).
        allowedPolicy: async (_ctx, client) => client.clientAuthMethod !== 'none',
      },
      registration: {
        enabled: true,
        initialAccessToken: false,
        issueRegistrationAccessToken: false,
        idFactory: generateClientId,
      },
      // docs/authentication.md#oauth-2: an https URL as client_id, allowed while the organisation allows self-registration (checked
      // again for a document still cached); the document must name that URL as its client_id (oidc-provider
      // checks) and is kept at most 24 hours.
      clientIdMetadataDocument: {
        enabled: true,
        ack: 'draft-02',
        allowFetch: async () => deps.selfRegistrationAllowed(org),
        allowClient: async () => deps.selfRegistrationAllowed(org),
        cacheDuration: { min: 30, max: 24 * 3600 },
      },
      resourceIndicators: {
        enabled: true,
        defaultResource: async (_ctx, _client, oneOf) => oneOf ?? resources.api,
        useGrantedResource: async () => true,
        async getResourceServerInfo(ctx, resource, client) {
          if (resource !== resources.api && resource !== resources.mcp) throw new errors.InvalidTarget(`unknown resource ${resource}; use ${resources.api} or ${resources.mcp}`);
          // docs/authentication.md#oauth-2: a scope outside the client's registered ones is invalid_scope, not silently dropped.
          const registered = client.scope ? client.scope.split(' ') : [...allScopes];
          const requested = typeof ctx.oidc.params?.scope === 'string' ? ctx.oidc.params.scope.split(' ').filter((s: string) => s !== '' && s !== 'openid' && s !== 'offline_access') : [];
          const outside = requested.filter((s: string) => !registered.includes(s));
          if (outside.length > 0) throw new errors.InvalidScope('requested scope is not allowed for this client', outside.join(' '));
          return { scope: registered.join(' '), audience: resource, accessTokenTTL: ACCESS_TOKEN_TTL_S, accessTokenFormat: 'opaque' };
        },
      },
    },
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL_S,
      ClientCredentials: ACCESS_TOKEN_TTL_S,
      AuthorizationCode: 60,
      RefreshToken: 30 * 24 * 3600,
      Grant: 365 * 24 * 3600,
      Interaction: 3600,
      Session: 12 * 3600,
      IdToken: 3600,
    },
    interactions: { policy, url: async (_ctx, interaction) => `/oauth/interaction/${interaction.uid}` },
    async loadExistingGrant(ctx) {
      const accountId = ctx.oidc.session?.accountId;
      const grantId =
        ctx.oidc.result?.consent?.grantId ??
        (accountId === undefined ? undefined : await latestGrantId(deps.db, deps.clock, org.id, ctx.oidc.client!.clientId, accountId));
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    // Tokens live by their own expiry, not by oidc-provider's session (sign-in state is ours).
    expiresWithSession: async () => false,
    // docs/authentication.md#oauth-2: browser-based clients may call the token, registration and revocation endpoints from any origin.
    clientBasedCORS: () => true,
    // oidc-provider's only outbound request is a Client ID Metadata Document: through our SSRF guard.
    fetch: ((url: string | URL, options: { signal?: AbortSignal | null }) => deps.fetchMetadataDocument(url, options)) as Configuration['fetch'],
    async renderError(ctx, out) {
      ctx.type = 'html';
      ctx.body = await deps.renderError(out as { error: string; error_description?: string });
    },
  };

  const provider = new Provider(issuer, configuration);
  // Our HTTP layer sets X-Forwarded-Proto/-Host to the public origin, so every URL the provider prints is ours.
  provider.proxy = true;
  // What the provider has no route for (POST /oauth/authorize, an OPTIONS that is no CORS preflight) would be
  // Koa's plain-text `Not Found`; every surface of the service answers an unknown route with the same problem
  // document instead.
  provider.use(async (ctx, next) => {
    await next();
    if (ctx.status !== 404 || ctx.body != null) return;
    const requestId = String(ctx.res.getHeader('request-id') ?? '');
    ctx.body = problemBody(new ApiError('request.route_not_found', `There is no route ${ctx.method} ${ctx.path}.`), requestId, deps.errorsUrl);
    ctx.status = 404;
    ctx.type = 'application/problem+json; charset=utf-8';
  });
  // docs/authentication.md#oauth-2: access tokens are `atr_at_…`, so they never parse as an API key and secret scanners know them.
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { access_token?: unknown; error?: unknown; error_description?: unknown } | undefined;
    if (ctx.oidc?.route !== 'token' || !body) return;
    if (typeof body.access_token === 'string') body.access_token = `${ACCESS_TOKEN_PREFIX}${body.access_token}`;
    // RFC 6749 5.2: a client asking for a grant it may not use is `unauthorized_client` (oidc-provider says
    // invalid_request, with this description).
    if (body.error === 'invalid_request' && body.error_description === 'requested grant type is not allowed for this client') body.error = 'unauthorized_client';
  });
  return provider;
}

async function latestGrantId(db: Db, clock: Clock, organisationId: string, clientId: string, accountId: string): Promise<string | undefined> {
  const row = await oauthRecordsRepository.latestGrant(db, organisationId, clientId, accountId, nowIso(clock));
  return row ? (JSON.parse(row.payload) as { jti: string }).jti : undefined;
}
