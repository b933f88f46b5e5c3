// /admin/integrations/oauth-clients (docs/authentication.md#signing-in-and-the-admin-area): every client of the organisation, those that
// registered themselves included; a form to register one; Rotate secret and Delete. The same service as
// `atrium oauth-client create`: same schema, rules and events.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { privilegedScopes, scopes } from '../access/capabilities.ts';
import { CreateOAuthClient, oauthGrantTypes } from '../auth/oauth/clients.schemas.ts';
import type { CreateOAuthClientInput } from '../auth/oauth/clients.service.ts';
import { ApiError } from '../errors/api-error.ts';
import { validateAsBody } from '../operations/body-validation.ts';
import { isUuid } from '../operations/schemas.ts';
import { fieldErrorsOf, formLines, formList, formString, type FieldErrors } from './forms.ts';
import { PageError, redirectWithFlash } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const PAGE = '/admin/integrations/oauth-clients';
const config = { adminPage: { capability: 'oauth_client/manage' as const } };

interface FormState {
  values: { name: string; type: string; redirect_uris: string; grant_types: string[]; scopes: string[]; service_person_id: string };
  errors: FieldErrors;
  error?: string;
}

const emptyForm: FormState = { values: { name: '', type: 'confidential', redirect_uris: '', grant_types: ['authorization_code'], scopes: [], service_person_id: '' }, errors: {} };

export const oauthClientsPage: PageRoutes = (scope, { services, render }) => {
  async function show(request: FastifyRequest, reply: FastifyReply, form = emptyForm, status = 200) {
    const orgId = request.organisation!.id;
    const [clients, people] = await Promise.all([services.oauthClients.list(orgId), services.people.list(orgId)]);
    const names = new Map(people.map((p) => [p.id, `${p.name} (${p.email})`]));
    return render(
      request,
      reply,
      'admin/oauth-clients',
      {
        title: 'OAuth clients',
        clients: clients.map((c) => ({
          ...c,
          redirect_uris: JSON.parse(c.redirect_uris) as string[],
          grant_types: JSON.parse(c.grant_types) as string[],
          scopes: JSON.parse(c.scopes) as string[],
          servicePerson: c.service_person_id ? (names.get(c.service_person_id) ?? 'a removed person') : null,
          self_registered: Boolean(c.self_registered),
        })),
        people,
        grantTypes: oauthGrantTypes.map((g) => ({ name: g, id: `grant-${g}` })),
        scopes: scopes.map((s) => ({ name: s, id: `scope-${s.replace(':', '-')}`, privileged: privilegedScopes.includes(s) })),
        form,
      },
      status,
    );
  }

  scope.get(PAGE, { config }, (request, reply) => show(request, reply));

  scope.post(PAGE, { config }, async (request, reply) => {
    const values = {
      name: formString(request.body, 'name').trim(),
      type: formString(request.body, 'type'),
      redirect_uris: formString(request.body, 'redirect_uris'),
      grant_types: formList(request.body, 'grant_types'),
      scopes: formList(request.body, 'scopes'),
      service_person_id: formString(request.body, 'service_person_id'),
    };
    try {
      const input = validateAsBody<CreateOAuthClientInput>(CreateOAuthClient, {
        name: values.name,
        type: values.type,
        redirect_uris: formLines(request.body, 'redirect_uris'),
        grant_types: values.grant_types,
        scopes: values.scopes,
        ...(values.service_person_id ? { service_person_id: values.service_person_id } : {}),
      });
      const client = await services.oauthClients.create(request.organisation!.id, request.signedIn!.personId, input);
      return redirectWithFlash(services.sessions, request, reply, PAGE, {
        notice: `Client “${input.name}” registered.`,
        secret: { label: client.client_secret ? 'The new client’s id and secret.' : 'The new client’s id (a public client has no secret).', clientId: client.client_id, value: client.client_secret },
      });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === 'validation.invalid_body') return show(request, reply, { values, errors: fieldErrorsOf(err) }, 422);
      if (err.status === 412) return show(request, reply, { values, errors: {}, error: `${err.detail} (${err.code})` }, 412);
      throw err;
    }
  });

  async function clientOf(request: FastifyRequest<{ Params: { id: string } }>) {
    const client = isUuid(request.params.id) ? await services.oauthClients.find(request.organisation!.id, request.params.id) : undefined;
    if (!client) throw new PageError(404, 'Not found', 'This organisation has no such OAuth client.');
    return client;
  }

  scope.post<{ Params: { id: string } }>(`${PAGE}/:id/rotate-secret`, { config }, async (request, reply) => {
    const client = await clientOf(request);
    if (client.type !== 'confidential') return redirectWithFlash(services.sessions, request, reply, PAGE, { error: 'A public client has no secret to rotate.' });
    const rotated = await services.oauthClients.rotateSecret(request.organisation!.id, client.id);
    return redirectWithFlash(services.sessions, request, reply, PAGE, {
      notice: `New secret for “${client.name}”: the previous one no longer works.`,
      secret: { label: 'The client’s new secret.', clientId: rotated.client_id, value: rotated.client_secret },
    });
  });

  scope.post<{ Params: { id: string } }>(`${PAGE}/:id/delete`, { config }, async (request, reply) => {
    const client = await clientOf(request);
    await services.oauthClients.remove(request.organisation!.id, client.id);
    return redirectWithFlash(services.sessions, request, reply, PAGE, { notice: `Client “${client.name}” deleted; every token it held is revoked.` });
  });
};
