// GET /login, POST /login, POST /logout (docs/authentication.md#signing-in-and-the-admin-area).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { publicOrigin } from '../public-origin.ts';
import { recordAudit } from '../audit/audit-log.ts';
import { pageSource } from '../audit/entry-points.ts';
import { formString } from './forms.ts';
import { PageError, SESSION_COOKIE } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const WRONG_PAIR = 'Email or password is wrong.';

/**
 * `return_to` only ever leads to a path on `origin` (the organisation's), never to another host. The value is
 * judged as the browser will read it: resolved by WHATWG URL (which drops tabs and newlines, turns `\` into
 * `/` and folds `.`, `..`, `%2e`), because `/.//evil.example` is a harmless-looking path whose normal form,
 * `//evil.example`, names another host. What is sent back is that normal form, and only if it still names
 * this origin when read on its own.
 */
export function safeReturnPath(value: unknown, origin: string): string {
  const fallback = '/admin';
  if (typeof value !== 'string' || !value.startsWith('/')) return fallback;
  let url: URL;
  try {
    url = new URL(value, origin);
  } catch {
    return fallback;
  }
  const path = `${url.pathname}${url.search}`;
  const reread = new URL(path, origin);
  const stays = url.origin === reread.origin && reread.origin === new URL(origin).origin && reread.pathname === url.pathname && reread.search === url.search;
  return stays && !path.startsWith('//') ? path : fallback;
}

export const signInPages: PageRoutes = (scope, { app, config, services, signIn, render }) => {
  const cookieOptions = { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: config.publicScheme === 'https' };

  const loginForm = (request: FastifyRequest, reply: FastifyReply, model: { email?: string; returnTo: string; failure?: string }, status = 200) =>
    render(request, reply, 'sign-in/login', { title: 'Sign in', narrow: true, ...model }, status);

  const returnPath = (request: FastifyRequest, value: unknown) => safeReturnPath(value, publicOrigin(config, request.organisation!.address));

  scope.get<{ Querystring: { return_to?: string } }>('/login', async (request, reply) => {
    const returnTo = returnPath(request, request.query.return_to);
    if (request.signedIn) return reply.redirect(returnTo, 303);
    return loginForm(request, reply, { returnTo });
  });

  scope.post('/login', async (request, reply) => {
    const email = formString(request.body, 'email');
    const returnTo = returnPath(request, formString(request.body, 'return_to'));
    const result = await signIn.signIn({ organisationId: request.organisation!.id, email, password: formString(request.body, 'password'), clientAddress: request.ip, source: pageSource(request, 'sign_in') });
    if (result.outcome === 'locked') {
      const minutes = Math.ceil(result.retryAfterSeconds / 60);
      throw new PageError(429, 'Too many failed sign-ins', `Signing in is paused after too many failed attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`, {
        'Retry-After': String(result.retryAfterSeconds),
      });
    }
    if (result.outcome === 'wrong_pair') return loginForm(request, reply, { email, returnTo, failure: WRONG_PAIR }, 401);
    // A session that was there before signing in is ended: a new sign-in always gets a new token.
    if (request.signedIn) await services.sessions.end(request.signedIn.sessionId);
    reply.setCookie(SESSION_COOKIE, result.token, cookieOptions);
    return reply.redirect(returnTo, 303);
  });

  scope.post('/logout', async (request, reply) => {
    const person = request.signedIn;
    if (person) {
      await app.db.transaction().execute(async (tx) => {
        await services.sessions.end(person.sessionId, tx);
        const entry = { ...pageSource(request, 'sign_in'), organisationId: person.organisationId, action: 'sign_out', target: { type: 'session', id: person.sessionId } };
        await recordAudit(tx, { ...entry, outcome: 'success', status: 303, changedFields: [] });
      });
    }
    reply.clearCookie(SESSION_COOKIE, cookieOptions);
    return reply.redirect('/login', 303);
  });
};
