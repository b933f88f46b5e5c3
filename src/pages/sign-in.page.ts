// GET /login, POST /login, POST /logout (CONTRACT: Signing in).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { formString } from './forms.ts';
import { PageError, SESSION_COOKIE } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const WRONG_PAIR = 'Email or password is wrong.';

/** `return_to` only ever leads to a path on this origin (never `//evil.example` or `https://…`). */
export function safeReturnPath(value: unknown): string {
  if (typeof value !== 'string' || !value.startsWith('/') || value.startsWith('//') || value.startsWith('/\\')) return '/admin';
  const url = new URL(value, 'http://same.invalid');
  return url.origin === 'http://same.invalid' ? `${url.pathname}${url.search}` : '/admin';
}

export const signInPages: PageRoutes = (scope, { config, services, signIn, render }) => {
  const cookieOptions = { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: config.publicScheme === 'https' };

  const loginForm = (request: FastifyRequest, reply: FastifyReply, model: { email?: string; returnTo: string; failure?: string }, status = 200) =>
    render(request, reply, 'sign-in/login', { title: 'Sign in', narrow: true, ...model }, status);

  scope.get<{ Querystring: { return_to?: string } }>('/login', async (request, reply) => {
    const returnTo = safeReturnPath(request.query.return_to);
    if (request.signedIn) return reply.redirect(returnTo, 303);
    return loginForm(request, reply, { returnTo });
  });

  scope.post('/login', async (request, reply) => {
    const email = formString(request.body, 'email');
    const returnTo = safeReturnPath(formString(request.body, 'return_to'));
    const result = await signIn.signIn({ organisationId: request.organisation!.id, email, password: formString(request.body, 'password'), clientAddress: request.ip });
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
    if (request.signedIn) await services.sessions.end(request.signedIn.sessionId);
    reply.clearCookie(SESSION_COOKIE, cookieOptions);
    return reply.redirect('/login', 303);
  });
};
