// /admin/webhooks and /admin/webhooks/{id} (spec: Events 1, 2, 6; docs/authentication.md#signing-in-and-the-admin-area). Every action
// calls the webhook service the REST operations call, in a transaction of its own, so a subscription added
// here gets the same SSRF check, verification ping, events and rules as operation 6.
import type { Static } from 'typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Db } from '../db/database.ts';
import { CreateWebhookSubscription } from '../domain/webhooks/webhooks.schemas.ts';
import { requireApiEntitlement } from '../domain/organisations/entitlement.ts';
import { ApiError } from '../errors/api-error.ts';
import { isUuid } from '../operations/schemas.ts';
import { fieldErrorsOf, formLines, formString, type FieldErrors } from './forms.ts';
import { validateAsBody } from '../operations/body-validation.ts';
import { PageError, redirectWithFlash } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const PAGE = '/admin/webhooks';
const config = { adminPage: { capability: 'webhook/manage' as const } };
const DELIVERIES_PER_PAGE = 50;

type CreateInput = Static<typeof CreateWebhookSubscription>;
type IdParams = { Params: { id: string } };

interface FormState {
  values: { url: string; event_types: string; description: string };
  errors: FieldErrors;
  error?: string;
}

const emptyForm: FormState = { values: { url: '', event_types: '*', description: '' }, errors: {} };

export const webhooksPages: PageRoutes = (scope, { app, services, render }) => {
  const inTransaction = <T>(work: (tx: Db) => Promise<T>) => app.db.transaction().execute(work);
  const orgOf = (request: FastifyRequest) => request.organisation!.id;

  /** The subscription the path names, or the 404 page (another organisation's id is simply unknown here). */
  async function subscriptionOf(request: FastifyRequest<IdParams>) {
    if (!isUuid(request.params.id)) throw new PageError(404, 'Not found', 'This organisation has no such webhook endpoint.');
    return services.webhooks.get(app.db, orgOf(request), request.params.id);
  }

  async function showList(request: FastifyRequest, reply: FastifyReply, form = emptyForm, status = 200) {
    const cursor = (request.query as { cursor?: string } | undefined)?.cursor;
    const page = await services.webhooks.list(app.db, orgOf(request), { limit: 100, ...(cursor ? { cursor } : {}) });
    return render(request, reply, 'admin/webhooks', { title: 'Webhooks', subscriptions: page.data, nextCursor: page.page.has_more ? page.page.next_cursor : null, form }, status);
  }

  scope.get(PAGE, { config }, (request, reply) => showList(request, reply));

  scope.post(PAGE, { config }, async (request, reply) => {
    const values = { url: formString(request.body, 'url').trim(), event_types: formString(request.body, 'event_types'), description: formString(request.body, 'description').trim() };
    const body = { url: values.url, event_types: formLines(request.body, 'event_types'), ...(values.description ? { description: values.description } : {}) };
    const orgId = orgOf(request);
    try {
      const input = validateAsBody<CreateInput>(CreateWebhookSubscription, body);
      // Before the ping: a plan without the API entitlement should not make us call anybody's endpoint.
      await requireApiEntitlement(app.db, orgId, 'webhook subscriptions');
      const verified = await services.webhooks.prepareCreate(input);
      const created = await inTransaction((tx) => services.webhooks.create(tx, orgId, input, verified));
      return redirectWithFlash(services.sessions, request, reply, `${PAGE}/${created.id}`, {
        notice: `Endpoint added: it answered the verification ping and is enabled.`,
        secret: { label: 'The signing secret of this endpoint.', value: created.secret },
      });
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status === 422) return showList(request, reply, { values, errors: fieldErrorsOf(err) }, 422);
      if (err.status === 409 || err.status === 412) return showList(request, reply, { values, errors: {}, error: `${err.detail} (${err.code})` }, err.status);
      throw err;
    }
  });

  scope.get<IdParams & { Querystring: { cursor?: string } }>(`${PAGE}/:id`, { config }, async (request, reply) => {
    const subscription = await subscriptionOf(request);
    const cursor = request.query.cursor;
    const deliveries = await services.webhooks.deliveries(app.db, orgOf(request), subscription.id, { limit: DELIVERIES_PER_PAGE, ...(cursor ? { cursor } : {}) });
    return render(request, reply, 'admin/webhook', {
      title: `Webhook endpoint ${new URL(subscription.url).host}`,
      subscription,
      deliveries: deliveries.data.map((d) => ({ ...d, lastAttempt: d.attempt_log.at(-1) ?? null })),
      nextCursor: deliveries.page.has_more ? deliveries.page.next_cursor : null,
    });
  });

  /** One action button on the endpoint's page: do it, then back to the page with what happened. */
  interface ActionOutcome {
    notice: string;
    secret?: { label: string; value: string };
    /** Where to go next; the endpoint's page unless said otherwise. */
    redirectTo?: string;
  }

  type Subscription = Awaited<ReturnType<typeof subscriptionOf>>;

  type ActionParams = { Params: { id: string; deliveryId?: string } };

  function action(path: string, perform: (tx: Db, orgId: string, subscription: Subscription, request: FastifyRequest<ActionParams>) => Promise<ActionOutcome>) {
    scope.post<ActionParams>(`${PAGE}/:id${path}`, { config }, async (request, reply) => {
      const subscription = await subscriptionOf(request);
      const back = `${PAGE}/${subscription.id}`;
      try {
        const { redirectTo, ...flash } = await inTransaction((tx) => perform(tx, orgOf(request), subscription, request));
        return redirectWithFlash(services.sessions, request, reply, redirectTo ?? back, flash);
      } catch (err) {
        // A conflict with the endpoint's state (a delivery still being tried) is news for the page, not an error page.
        if (err instanceof ApiError && err.status === 409) return redirectWithFlash(services.sessions, request, reply, back, { error: err.detail });
        throw err;
      }
    });
  }

  action('/send-test', async (tx, orgId, { id }) => {
    await services.webhooks.sendTest(tx, orgId, id);
    return { notice: 'Test event queued: it appears in the delivery log below once sent.' };
  });
  action('/rotate-secret', async (tx, orgId, { id }) => {
    const rotated = await services.webhooks.rotateSecret(tx, orgId, id);
    return {
      notice: `Secret rotated. Deliveries carry a signature with the previous secret too until ${rotated.previous_secret_expires_at}.`,
      secret: { label: 'The new signing secret of this endpoint.', value: rotated.secret },
    };
  });
  action('/disable', async (tx, orgId, { id }) => {
    await services.webhooks.update(tx, orgId, id, { status: 'disabled' }, undefined);
    return { notice: 'Endpoint disabled: it gets no new deliveries until it is enabled again.' };
  });
  action('/enable', async (tx, orgId, { id }) => {
    await services.webhooks.update(tx, orgId, id, { status: 'enabled' }, undefined);
    return { notice: 'Endpoint enabled.' };
  });
  action('/delete', async (tx, orgId, { id, url }) => {
    await services.webhooks.remove(tx, orgId, id);
    return { notice: `Endpoint ${url} deleted.`, redirectTo: PAGE };
  });
  action('/deliveries/:deliveryId/resend', async (tx, orgId, { id }, request) => {
    const deliveryId = request.params.deliveryId ?? '';
    if (!isUuid(deliveryId)) throw new PageError(404, 'Not found', 'This endpoint has no such delivery.');
    const delivery = await services.webhooks.resend(tx, orgId, id, deliveryId);
    return { notice: `Delivery of ${delivery.event_type} queued again (same webhook-id).` };
  });
};
