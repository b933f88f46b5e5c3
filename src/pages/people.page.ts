// /admin/people (docs/api-guide.md#users-roles-and-the-organisation): everyone of the organisation, a form to invite someone, and per
// person: change roles, suspend or reactivate, send an invitation, remove. Seeing needs `person/view`, acting
// `person/manage` (removing `person/delete`); every action calls the users service with the signed-in person's
// authority, so the rules of the REST API hold here too (yourself, the last administrator, roles you may give).
import type { Static } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { capabilityDescriptions, type Capability } from '../access/capabilities.ts';
import { ApiError } from '../errors/api-error.ts';
import { validateAsBody } from '../operations/body-validation.ts';
import { isUuid } from '../operations/schemas.ts';
import { CreateUser, UpdateUser } from '../domain/users/users.schemas.ts';
import type { Authority } from '../domain/users/users.service.ts';
import { fieldErrorsOf, formList, formString, type FieldErrors } from './forms.ts';
import { PageError, redirectWithFlash } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const PAGE = '/admin/people';
const see = { adminPage: { capability: 'person/view' as const } };
const manage = { adminPage: { capability: 'person/manage' as const } };
const remove = { adminPage: { capability: 'person/delete' as const } };

interface FormState {
  values: { email: string; name: string; roles: string[] };
  errors: FieldErrors;
}

type PersonParams = { Params: { id: string } };

export const peoplePage: PageRoutes = (scope, { app, services, render }) => {
  const authority = (request: FastifyRequest): Authority => ({ personId: request.signedIn!.personId, scopes: null, capabilities: request.signedIn!.capabilities });
  const back = (request: FastifyRequest, reply: FastifyReply, notice: string) => redirectWithFlash(services.sessions, request, reply, PAGE, { notice });

  async function show(request: FastifyRequest, reply: FastifyReply, form: FormState = { values: { email: '', name: '', roles: [] }, errors: {} }, status = 200) {
    const orgId = request.organisation!.id;
    const me = request.signedIn!;
    const [page, roles] = await Promise.all([services.users.list(app.db, orgId, { limit: 200 }), services.roles.all(app.db, orgId)]);
    return render(
      request,
      reply,
      'admin/people',
      {
        title: 'People',
        people: page.data.map((u) => ({ ...u, self: u.id === me.personId })),
        more: page.page.has_more,
        roles: roles.map((r) => ({ ...r, capabilities: r.capabilities.map((c) => ({ name: c, description: capabilityDescriptions[c as Capability] ?? '' })) })),
        may: { manage: me.capabilities.has('person/manage'), remove: me.capabilities.has('person/delete'), assign: me.capabilities.has('role/assign') },
        form,
      },
      status,
    );
  }

  /** Runs an action on one person; a refusal of the service comes back as a message on the page. */
  async function act(request: FastifyRequest<PersonParams>, reply: FastifyReply, action: (id: string) => Promise<string>) {
    if (!isUuid(request.params.id)) throw new PageError(404, 'Not found', 'This organisation has no such person.');
    try {
      const notice = await action(request.params.id);
      return back(request, reply, notice);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status === 404 || err.status >= 500) throw err;
      return redirectWithFlash(services.sessions, request, reply, PAGE, { error: `${err.detail} (${err.code})` });
    }
  }

  scope.get(PAGE, { config: see }, (request, reply) => show(request, reply));

  // Invite: add the person, then mail them the link (after the person's row is committed: the mail server must
  // not hold the database).
  scope.post(PAGE, { config: manage }, async (request, reply) => {
    const values = { email: formString(request.body, 'email').trim(), name: formString(request.body, 'name').trim(), roles: formList(request.body, 'roles') };
    const orgId = request.organisation!.id;
    let user;
    try {
      const input = validateAsBody<Static<typeof CreateUser>>(CreateUser, values);
      user = await app.db.transaction().execute((tx) => services.users.create(tx, orgId, authority(request), input));
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500 || err.status === 404) throw err;
      const errors = err.code === 'validation.invalid_body' || err.errors ? fieldErrorsOf(err) : { _form: `${err.detail} (${err.code})` };
      return show(request, reply, { values, errors }, err.status);
    }
    const sent = await services.users.sendInvitation(app.db, orgId, user.id);
    await app.db.transaction().execute((tx) => services.users.recordInvitation(tx, orgId, user.id, sent));
    return back(request, reply, `${user.name} was added and mailed an invitation to choose a password (${user.email}).`);
  });

  scope.post<PersonParams>(`${PAGE}/:id/roles`, { config: manage }, (request, reply) =>
    act(request, reply, async (id) => {
      const input = validateAsBody<Static<typeof UpdateUser>>(UpdateUser, { roles: formList(request.body, 'roles') });
      const user = await app.db.transaction().execute((tx) => services.users.update(tx, request.organisation!.id, authority(request), id, input));
      return `Roles of ${user.name}: ${user.roles.join(', ') || 'none'}.`;
    }),
  );

  for (const [path, status, done] of [
    ['suspend', 'suspended', 'is suspended: signed out, and their keys and tokens are refused'],
    ['reactivate', 'active', 'is active again'],
  ] as const) {
    scope.post<PersonParams>(`${PAGE}/:id/${path}`, { config: manage }, (request, reply) =>
      act(request, reply, async (id) => {
        const user = await app.db.transaction().execute((tx) => services.users.update(tx, request.organisation!.id, authority(request), id, { status }));
        return `${user.name} ${done}.`;
      }),
    );
  }

  scope.post<PersonParams>(`${PAGE}/:id/invite`, { config: manage }, (request, reply) =>
    act(request, reply, async (id) => {
      const orgId = request.organisation!.id;
      const sent = await services.users.sendInvitation(app.db, orgId, id);
      await app.db.transaction().execute((tx) => services.users.recordInvitation(tx, orgId, id, sent));
      return 'Invitation mailed: the link works once, for 72 hours.';
    }),
  );

  scope.post<PersonParams>(`${PAGE}/:id/remove`, { config: remove }, (request, reply) =>
    act(request, reply, async (id) => {
      const user = await services.users.get(app.db, request.organisation!.id, id);
      await app.db.transaction().execute((tx) => services.users.remove(tx, request.organisation!.id, authority(request), id));
      return `${user.name} was removed: their sign-in, sessions, keys and tokens no longer work.`;
    }),
  );
};

