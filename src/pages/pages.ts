// The pages a person meets: sign-in and the admin area (docs/authentication.md#signing-in-and-the-admin-area). One
// encapsulated Fastify scope, so that form parsing, cookies, CSRF tokens and the pages' security headers
// apply here and nowhere in the JSON API.
import fastifyCookie from '@fastify/cookie';
import fastifyCsrf from '@fastify/csrf-protection';
import fastifyFormbody from '@fastify/formbody';
import fastifyHelmet from '@fastify/helmet';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../config.ts';
import type { LoginThrottle } from '../auth/login-throttle.ts';
import type { AuthorizationServers } from '../auth/oauth/authorization-servers.ts';
import { createSignInService } from '../auth/sign-in.service.ts';
import { ApiError } from '../errors/api-error.ts';
import { pageHelmetOptions } from '../http/page-headers.ts';
import { DATABASE_RETRY_AFTER_S, isDatabaseUnavailable } from '../db/availability.ts';
import type { Services } from '../services.ts';
import { auditAdminActions, recordPageRefusal } from '../audit/entry-points.ts';
import { auditPage } from './audit.page.ts';
import { apiKeysPage } from './api-keys.page.ts';
import { consentPages } from './consent.page.ts';
import { oauthClientsPage } from './oauth-clients.page.ts';
import { extensionsPage } from './extensions.page.ts';
import { mcpPage } from './mcp.page.ts';
import { overviewPage } from './overview.page.ts';
import { createPageRenderer, csrfUserInfo, PageError, SESSION_COOKIE } from './page-context.ts';
import { signInPages } from './sign-in.page.ts';
import { invitationPages } from './invitation.page.ts';
import { peoplePage } from './people.page.ts';
import { webhooksPages } from './webhooks.page.ts';
import type { PageDeps, PageRoutes } from './page-routes.ts';

const pageRoutes: PageRoutes[] = [signInPages, invitationPages, consentPages, overviewPage, peoplePage, apiKeysPage, oauthClientsPage, mcpPage, webhooksPages, extensionsPage, auditPage];

function pageErrorOf(err: unknown): PageError {
  if (err instanceof PageError) return err;
  const code = (err as FastifyError).code;
  if (code === 'FST_CSRF_INVALID_TOKEN' || code === 'FST_CSRF_MISSING_SECRET') {
    return new PageError(403, 'The form could not be accepted', 'The form was sent without a valid security token (it may have been open too long, or come from another site). Nothing was changed. Go back, reload the page and try again.');
  }
  if (err instanceof ApiError) {
    if (err.status === 404) return new PageError(404, 'Not found', 'There is no such page or record in this organisation.');
    if (err.status === 412) return new PageError(412, 'Not included in your plan', `${err.detail} (${err.code})`);
    return new PageError(err.status, err.title, `${err.detail} (${err.code})`, err.retryAfter !== undefined ? { 'Retry-After': String(err.retryAfter) } : undefined);
  }
  if (isDatabaseUnavailable(err)) {
    return new PageError(502, 'Temporarily unavailable', `The service cannot reach its database just now. Nothing was changed; try again in ${DATABASE_RETRY_AFTER_S} seconds.`, { 'Retry-After': String(DATABASE_RETRY_AFTER_S) });
  }
  if ((err as FastifyError).statusCode === 413) return new PageError(413, 'Too large', 'The form is larger than this service accepts.');
  if ((err as FastifyError).statusCode === 415 || (err as FastifyError).statusCode === 400) return new PageError(400, 'The form could not be read', 'Send the form from its page.');
  return new PageError(500, 'Something went wrong', 'The page failed on our side. Nothing you did caused it; try again in a moment.');
}

export async function registerPages(
  app: FastifyInstance,
  deps: { config: Config; services: Services; throttle: LoginThrottle; csrfKey: string; authorizationServers: AuthorizationServers },
): Promise<void> {
  const { config, services } = deps;
  const secure = config.publicScheme === 'https';
  const render = createPageRenderer(services.sessions);
  const signIn = createSignInService({ db: app.db, people: services.people, sessions: services.sessions, throttle: deps.throttle });

  await app.register(async (scope) => {
    await scope.register(fastifyFormbody);
    await scope.register(fastifyCookie);
    await scope.register(fastifyCsrf, {
      sessionPlugin: '@fastify/cookie',
      cookieKey: 'atrium_csrf',
      cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, secure },
      getUserInfo: csrfUserInfo,
      csrfOpts: { hmacKey: deps.csrfKey },
    });
    await scope.register(fastifyHelmet, pageHelmetOptions(secure));

    scope.addHook('onRequest', async (request, reply) => {
      reply.header('Cache-Control', 'no-store');
      const org = await services.organisations.findByAddress(request.hostname.toLowerCase());
      if (!org) throw new PageError(404, 'No organisation here', `No organisation is served at ${request.hostname}.`);
      request.organisation = org;
      const token = request.cookies[SESSION_COOKIE];
      if (token) {
        const person = await services.sessions.resolve(token, org.id);
        if (person) {
          request.signedIn = person;
          request.sessionToken = token;
        }
      }
    });

    // Every form carries its CSRF token; the check is added to each POST route as it is declared, so that no
    // page can forget it. It runs after the body is parsed and after the admin-page hook below.
    scope.addHook('onRoute', (route) => {
      if (route.method !== 'POST') return;
      // Each admin action is recorded in the audit log with the change it makes.
      auditAdminActions(route);
      const own = route.preHandler === undefined ? [] : Array.isArray(route.preHandler) ? route.preHandler : [route.preHandler];
      route.preHandler = [scope.csrfProtection, ...own];
    });

    // Admin pages: signed in (else to the sign-in page, coming back here after), with the page's capability.
    scope.addHook('preHandler', async (request, reply) => {
      const page = request.routeOptions.config.adminPage;
      if (!page) return;
      if (!request.signedIn) {
        const back = request.method === 'GET' ? request.url : '/admin';
        return reply.redirect(`/login?return_to=${encodeURIComponent(back)}`, 303);
      }
      if (page.capability !== null && !request.signedIn.capabilities.has(page.capability)) {
        throw new PageError(403, 'Not allowed', `This page needs the capability ${page.capability}, which you do not have in this organisation.`);
      }
    });

    scope.setErrorHandler(async (err, request: FastifyRequest, reply: FastifyReply) => {
      const page = pageErrorOf(err);
      if (page.status === 500) request.log.error({ err }, 'page failed');
      await recordPageRefusal(app.db, request, page.status);
      reply.headers(page.headers);
      return render(request, reply, 'error', { title: page.title, message: page.message, status: page.status }, page.status);
    });

    const pageDeps: PageDeps = { app, config, services, signIn, render, authorizationServers: deps.authorizationServers };
    for (const routes of pageRoutes) routes(scope, pageDeps);
  });
}
