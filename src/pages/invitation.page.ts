// /invitations/{token} (docs/api-guide.md#users-roles-and-the-organisation): the page an invitation mail links to. The person chooses a
// password (twice) and is signed in; a used or expired link is a 410 page. The token is the only credential
// here: it is looked up by its hash and used up in the transaction that sets the password.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { MIN_PASSWORD_LENGTH } from '../domain/people/people.service.ts';
import { formString } from './forms.ts';
import { PageError, SESSION_COOKIE } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const gone = () =>
  new PageError(410, 'This link no longer works', 'Invitation links work once, for 72 hours. If you have set your password already, sign in; otherwise ask an administrator for a new invitation.');

/** The request URL as logs may show it: an invitation's token is a credential until it is used. */
export const withoutInvitationToken = (url: string) => url.replace(/^\/invitations\/[^/?#]+/, '/invitations/[token]');

type Params = { Params: { token: string } };

export const invitationPages: PageRoutes = (scope, { config, services, render }) => {
  const cookieOptions = { httpOnly: true, sameSite: 'lax' as const, path: '/', secure: config.publicScheme === 'https' };

  const form = (request: FastifyRequest<Params>, reply: FastifyReply, model: { email: string; errors: Record<string, string> }, status = 200) =>
    render(request, reply, 'invitations/accept', { title: 'Choose your password', narrow: true, token: request.params.token, minLength: MIN_PASSWORD_LENGTH, ...model }, status);

  scope.get<Params>('/invitations/:token', async (request, reply) => {
    const state = await services.users.invitation(request.organisation!.id, request.params.token);
    if (state.state === 'gone') throw gone();
    return form(request, reply, { email: state.email, errors: {} });
  });

  scope.post<Params>('/invitations/:token', async (request, reply) => {
    const orgId = request.organisation!.id;
    const state = await services.users.invitation(orgId, request.params.token);
    if (state.state === 'gone') throw gone();
    const password = formString(request.body, 'password');
    if (password !== formString(request.body, 'password_repeat')) return form(request, reply, { email: state.email, errors: { password_repeat: 'The two passwords differ; type the same password twice.' } }, 422);
    const result = await services.users.acceptInvitation(orgId, request.params.token, password);
    if (result === 'gone') throw gone();
    if (result === 'too_short') return form(request, reply, { email: state.email, errors: { password: `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.` } }, 422);
    if (request.signedIn) await services.sessions.end(request.signedIn.sessionId);
    const session = await services.sessions.start(orgId, result.personId);
    reply.setCookie(SESSION_COOKIE, session.token, cookieOptions);
    return reply.redirect('/admin', 303);
  });
};
