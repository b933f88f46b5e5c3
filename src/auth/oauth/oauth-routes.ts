// The authorization server's HTTP endpoints on every organisation's address (docs/authentication.md#oauth-2), handed to that
// organisation's oidc-provider after oauth-requests.ts has prepared them. The sign-in and consent steps are
// pages (src/pages/consent.page.ts). Errors here are RFC 6749 / 7591 JSON, not problem documents; only a route
// that does not exist is the problem document request.route_not_found, as on every surface.
import fastifyCookie from '@fastify/cookie';
import fastifyHelmet from '@fastify/helmet';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { pageHelmetOptions } from '../../http/page-headers.ts';
import { allowAnyOrigin, preflightHandler, type CrossOriginPolicy } from '../../http/cross-origin.ts';
import type { OperationServices } from '../../operations/operation.ts';
import { publicOrigin, type PublicOriginSettings } from '../../public-origin.ts';
import type { AuthorizationServers } from './authorization-servers.ts';
import type { ProviderRequestFacts } from './authorization-server.ts';
import { forwardedHeaders, hashBasicSecret, OAuthRequestError, replayRequest, rewriteForm, rewriteRegistration } from './oauth-requests.ts';

const SESSION_COOKIE = 'atrium_session';
const BODY_LIMIT = 64 * 1024;

/**
 * Provider endpoints: [path, methods, whether a browser lands there]. OPTIONS answers CORS preflights
 * (docs/authentication.md: browser-based clients); oidc-provider has none for registration, so that one is ours
 * (registrationCors). Where a browser lands, the provider renders pages itself (its error page, the form_post
 * page): those answers carry the security headers of every page.
 */
export const endpoints: Array<[string, Array<'GET' | 'POST' | 'OPTIONS'>, 'page'?]> = [
  ['/oauth/authorize', ['GET', 'POST'], 'page'],
  ['/oauth/authorize/:uid', ['GET'], 'page'],
  ['/oauth/token', ['POST', 'OPTIONS']],
  ['/oauth/revoke', ['POST', 'OPTIONS']],
  ['/oauth/introspect', ['POST', 'OPTIONS']],
  ['/oauth/register', ['POST']],
  ['/oauth/jwks', ['GET']],
  ['/.well-known/openid-configuration', ['GET', 'OPTIONS']],
  ['/.well-known/oauth-authorization-server', ['GET', 'OPTIONS']],
];

/** Self-registration from a browser-based client: oidc-provider gives /oauth/register no CORS of its own. */
const registrationCors: CrossOriginPolicy = { methods: 'POST, OPTIONS', headers: 'Content-Type', expose: 'Request-Id' };

function sendOAuthError(reply: FastifyReply, status: number, error: string, description: string) {
  return reply.code(status).header('Cache-Control', 'no-store').type('application/json').send({ error, error_description: description });
}

export async function registerOAuthRoutes(app: FastifyInstance, deps: { services: OperationServices; servers: AuthorizationServers; publicOrigin: PublicOriginSettings }): Promise<void> {
  const { services, servers } = deps;

  await app.register(async (scope) => {
    await scope.register(fastifyCookie);
    // Bodies stay text: they are checked and rewritten here, then replayed to the provider.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: BODY_LIMIT }, (_request, body, done) => done(null, body));

    async function handle(request: FastifyRequest, reply: FastifyReply) {
      const org = await services.organisations.findByAddress(request.hostname.toLowerCase());
      if (!org) return sendOAuthError(reply, 404, 'invalid_request', `No organisation is served at ${request.hostname}.`);
      const origin = publicOrigin(deps.publicOrigin, org.address);
      const headers = forwardedHeaders(request.raw.headers, origin, request.ip);
      headers.authorization = hashBasicSecret(request.headers.authorization);
      if (headers.authorization === undefined) delete headers.authorization;

      let forwarded: IncomingMessage = request.raw;
      if (request.method === 'POST') {
        let body = typeof request.body === 'string' ? request.body : '';
        try {
          if (request.url.startsWith('/oauth/register')) {
            allowAnyOrigin(reply, registrationCors);
            const settings = await services.mcpSettings.get(org.id);
            if (!settings.allowSelfRegistration) return sendOAuthError(reply, 403, 'access_denied', 'This organisation does not let clients register themselves; ask its administrator to register the client.');
            if (org.plan === 'no-api') return sendOAuthError(reply, 403, 'access_denied', "This organisation's plan does not include the API, so no client can register (commerce.plan_entitlement).");
            body = rewriteRegistration(body);
          } else if (String(request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) {
            body = await rewriteForm(body, request.headers.authorization, async (clientId) => {
              const row = await services.oauthClients.findByClientId(org.id, clientId);
              return row ? (JSON.parse(row.scopes) as string[]) : undefined;
            });
          }
        } catch (err) {
          if (err instanceof OAuthRequestError) return sendOAuthError(reply, err.status, err.error, err.message);
          throw err;
        }
        forwarded = replayRequest(request.raw, headers, body);
      } else {
        request.raw.headers = headers;
      }
      if (request.url.startsWith('/.well-known/oauth-authorization-server')) forwarded.url = '/.well-known/openid-configuration';

      const token = request.cookies[SESSION_COOKIE];
      const person = token ? await services.sessions.resolve(token, org.id) : undefined;
      (forwarded as IncomingMessage & { atrium?: ProviderRequestFacts }).atrium = { atriumPersonId: person?.personId };

      const provider = await servers.forOrganisation(org);
      reply.hijack();
      // The provider writes the answer itself: what Fastify holds for the reply so far (Request-Id, CORS) goes with it.
      for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value as string);
      await provider.callback()(forwarded, reply.raw);
    }

    for (const [path, methods, page] of endpoints) if (!page) scope.route({ method: methods, url: path, handler: handle });
    await scope.register(async (pages) => {
      // Set on the raw response before the provider runs: its form_post page adds its script's hash to this CSP.
      await pages.register(fastifyHelmet, pageHelmetOptions(deps.publicOrigin.publicScheme === 'https'));
      pages.addHook('onRequest', async (_request, reply) => void reply.header('Cache-Control', 'no-store'));
      for (const [path, methods, page] of endpoints) if (page) pages.route({ method: methods, url: path, handler: handle });
    });
    scope.options('/oauth/register', preflightHandler(registrationCors));
  });
}
