// /admin/integrations/api-keys (docs/authentication.md#signing-in-and-the-admin-area): every key of the organisation, a form to make one
// (it acts as the person who makes it), and Revoke. The same service as the CLI: same row, events and rules.
import type { Static } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { privilegedScopes, scopes } from '../access/capabilities.ts';
import { CreateApiKey } from '../auth/api-keys.schemas.ts';
import { ApiError } from '../errors/api-error.ts';
import { isUuid } from '../operations/schemas.ts';
import { fieldErrorsOf, formList, formString, type FieldErrors } from './forms.ts';
import { validateAsBody } from '../operations/body-validation.ts';
import { PageError, redirectWithFlash } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const PAGE = '/admin/integrations/api-keys';
const config = { adminPage: { capability: 'api_key/manage' as const } };

interface FormState {
  values: { name: string; scopes: string[]; mode: string };
  errors: FieldErrors;
  error?: string;
}

export const apiKeysPage: PageRoutes = (scope, { services, render }) => {
  async function show(request: FastifyRequest, reply: FastifyReply, form: FormState = { values: { name: '', scopes: [], mode: 'live' }, errors: {} }, status = 200) {
    const orgId = request.organisation!.id;
    const [keys, people] = await Promise.all([services.apiKeys.list(orgId), services.people.list(orgId)]);
    const names = new Map(people.map((p) => [p.id, p.name]));
    return render(
      request,
      reply,
      'admin/api-keys',
      {
        title: 'API keys',
        keys: keys.map((k) => ({ ...k, scopes: JSON.parse(k.scopes) as string[], holder: names.get(k.person_id) ?? 'a removed person' })),
        scopes: scopes.map((s) => ({ name: s, id: `scope-${s.replace(':', '-')}`, privileged: privilegedScopes.includes(s) })),
        form,
      },
      status,
    );
  }

  scope.get(PAGE, { config }, (request, reply) => show(request, reply));

  scope.post(PAGE, { config }, async (request, reply) => {
    const values = { name: formString(request.body, 'name').trim(), scopes: formList(request.body, 'scopes'), mode: formString(request.body, 'mode') || 'live' };
    const person = request.signedIn!;
    try {
      const input = validateAsBody<Static<typeof CreateApiKey>>(CreateApiKey, values);
      const { key } = await services.apiKeys.create({ organisationId: request.organisation!.id, personId: person.personId, ...input });
      return redirectWithFlash(services.sessions, request, reply, PAGE, {
        notice: `API key “${input.name}” created. It acts as you, limited to its scopes.`,
        secret: { label: 'Your new API key.', value: key },
      });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.code === 'validation.invalid_body') return show(request, reply, { values, errors: fieldErrorsOf(err) }, 422);
      if (err.status === 412) return show(request, reply, { values, errors: {}, error: `${err.detail} (${err.code})` }, 412);
      throw err;
    }
  });

  scope.post<{ Params: { id: string } }>(`${PAGE}/:id/revoke`, { config }, async (request, reply) => {
    const orgId = request.organisation!.id;
    const key = isUuid(request.params.id) ? await services.apiKeys.find(orgId, request.params.id) : undefined;
    if (!key) throw new PageError(404, 'Not found', 'This organisation has no such API key.');
    const revoked = await services.apiKeys.revoke(orgId, key.id);
    return redirectWithFlash(services.sessions, request, reply, PAGE, { notice: revoked ? 'API key revoked: it is refused from now on.' : 'That API key was already revoked.' });
  });
};
