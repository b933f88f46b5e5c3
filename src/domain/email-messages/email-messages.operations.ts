import { defineOperation } from '../../operations/operation.ts';
import { bulkOperation } from '../bulk/bulk.operation.ts';
import { createOperation, deleteByIdOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type Resource } from '../../operations/resource-operations.ts';
import type { Static } from 'typebox';
import { IdParams, isUuid, ListEnvelope } from '../../operations/schemas.ts';
import type { BulkRequestBody } from '../bulk/bulk-engine.ts';
import type { EmailMessageStore, NamedInBulk } from './email-messages.store.ts';
import { CreateEmailMessage, EmailMessage, ListEmailMessagesQuery, ListRecipientsQuery, Recipient, UpdateEmailMessage, UpsertEmailMessage } from './email-messages.schemas.ts';

const message: Resource = { collection: 'email_messages', resourceType: 'email_message', name: { singular: 'email message', plural: 'email messages' }, tag: 'Email messages', item: EmailMessage, notFoundCode: 'email_message.not_found' };
const { tag, notFoundCode } = message;
const capability = 'email/campaign_manage' as const;
const read = { scope: 'email:read', capability } as const;
const write = { scope: 'email:write', capability } as const;
const example = {
  subject: 'Week 2 starts on Monday',
  body: { format: 'markdown', content: 'Hello,\n\nWeek 2 of *Introduction to Statistics* opens on Monday. Read chapter 3 before the first session.' },
  audience: { type: 'course', course_id: '0193a5b2-7c1d-7000-8000-000000000001', roles: ['student'] },
  send_at: '2026-11-09T07:00:00Z',
  status: 'draft',
};

/**
 * What a bulk request's operations name, read from the body before each operation is validated: only values of
 * the right shape (an id that is a UUID), as the operations that name anything else are refused unread.
 */
function namedIn(body: BulkRequestBody): NamedInBulk {
  const externalIds = new Set<string>();
  const courseIds = new Set<string>();
  const personIds = new Set<string>();
  for (const item of body.operations) {
    const data = item.data ?? {};
    if (typeof item.external_id === 'string') externalIds.add(item.external_id);
    if (typeof data.external_id === 'string') externalIds.add(data.external_id);
    const audience = data.audience as { course_id?: unknown; person_ids?: unknown } | undefined;
    if (typeof audience !== 'object' || audience === null) continue;
    if (typeof audience.course_id === 'string' && isUuid(audience.course_id)) courseIds.add(audience.course_id);
    if (Array.isArray(audience.person_ids)) for (const id of audience.person_ids) if (typeof id === 'string' && isUuid(id)) personIds.add(id);
  }
  return { externalIds, courseIds, personIds };
}

export const emailMessageOperations = [
  listOperation({
    ...message,
    id: 'listEmailMessages',
    summary: 'List email messages',
    description: 'Campaign messages in creation order, optionally only those in one `status`.',
    ...read,
    query: ListEmailMessagesQuery,
    handler: (ctx, { query }) => ctx.services.emailMessages.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    ...message,
    id: 'getEmailMessage',
    summary: 'Read an email message',
    description: 'A deleted message is still readable, with `deleted_at` set.',
    ...read,
    read: (ctx, id) => ctx.services.emailMessages.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    ...message,
    id: 'createEmailMessage',
    errorCodes: ['course.deleted', 'resource.external_id_taken'],
    summary: 'Create an email message',
    description:
      'A `draft` (the default) or a `scheduled` message, sent when `send_at` comes, once to each person its audience resolves to then. ' +
      '422 for a `send_at` in the past, unknown people or course; 409 for a deleted course or a taken `external_id`.',
    ...write,
    emits: ['email_message.created'],
    body: CreateEmailMessage,
    bodyExample: example,
    handler: (ctx, { body }) => ctx.services.emailMessages.create(ctx.db, ctx.organisation.id, ctx.actor.personId, body),
  }),
  updateOperation({
    ...message,
    id: 'updateEmailMessage',
    errorCodes: ['course.deleted', 'email_message.deleted', 'email_message.sending', 'email_message.sent', 'email_message.cancelled'],
    summary: 'Change, schedule, unschedule or cancel an email message',
    description:
      'Partial update: fields left out keep their value. `status: scheduled` needs `send_at` (now or later); `draft` unschedules; `cancelled` is final. ' +
      'Only a `draft` or `scheduled` message changes: one that is `sending`, `sent`, `cancelled` or deleted is a 409 (a body that changes nothing is a 200).',
    ...write,
    emits: ['email_message.updated'],
    body: UpdateEmailMessage,
    bodyExample: { subject: 'Week 2 starts on Tuesday', send_at: '2026-11-10T07:00:00Z' },
    handler: (ctx, { params, body }) => ctx.services.emailMessages.update(ctx.db, ctx.organisation.id, ctx.actor.personId, params.id, body),
  }),
  deleteByIdOperation({
    ...message,
    id: 'deleteEmailMessage',
    errorCodes: ['email_message.deleted', 'email_message.sending', 'email_message.sent', 'email_message.cancelled'],
    summary: 'Delete an email message',
    description:
      'Soft delete: the message keeps its row (and recipients) with `deleted_at` set. A scheduled message is cancelled and never sent. ' +
      'A message being sent, or already deleted: 409.',
    scope: 'email:delete',
    capability,
    emits: ['email_message.deleted'],
    remove: (ctx, id) => ctx.services.emailMessages.remove(ctx.db, ctx.organisation.id, id),
  }),
  defineOperation({
    id: 'listEmailMessageRecipients',
    method: 'GET',
    path: '/email_messages/{id}/recipients',
    tag,
    summary: "List an email message's recipients",
    description:
      'Once sending has started: each recipient with its outcome (`pending`, `sent`, `failed` with `error`). Before (a draft or scheduled message): ' +
      'whom the audience resolves to now, all `pending`. In person id order.',
    scope: 'email:read',
    capability,
    writes: false,
    params: IdParams,
    query: ListRecipientsQuery,
    notFoundCode,
    success: { status: 200, schema: ListEnvelope(Recipient), description: 'A page of recipients.' },
    errors: [404, 422],
    handler: (ctx, { params, query }) => ctx.services.emailMessages.recipients(ctx.db, ctx.organisation.id, params.id, query),
  }),
  ...syncOperations({
    ...message,
    upsertErrorCodes: ['course.deleted', 'email_message.deleted', 'email_message.sending', 'email_message.sent', 'email_message.cancelled', 'email_message.concurrent_change', 'resource.external_id_taken'],
    read,
    write,
    upsertBody: UpsertEmailMessage,
    upsertExample: example,
    getByExternalId: (ctx, ext) => ctx.services.emailMessages.getByExternalId(ctx.db, ctx.organisation.id, ext),
    upsertByExternalId: (ctx, ext, body) => ctx.services.emailMessages.upsertByExternalId(ctx.db, ctx.organisation.id, ctx.actor.personId, ext, body),
  }),
  // spec: operation 8 — create or upsert up to 500 messages in one request, through the shared bulk engine.
  bulkOperation({
    id: 'bulkEmailMessages',
    collection: 'email_messages',
    tag,
    summary: 'Apply up to 500 email message operations',
    scope: 'email:write',
    capability,
    item: EmailMessage,
    emits: ['email_message.created', 'email_message.updated'],
    operations: { create: { data: CreateEmailMessage }, upsert: { data: UpsertEmailMessage } },
    example: { ref: 'message-1', op: 'create', data: example },
    executors(ctx, body) {
      const { db, services } = ctx;
      const org = ctx.organisation.id;
      const actor = ctx.actor.personId;
      const bind = (store?: EmailMessageStore) => ({
        create: (data: Static<typeof CreateEmailMessage>, externalId: string | undefined) =>
          services.emailMessages.create(db, org, actor, externalId === undefined ? data : { ...data, external_id: externalId }, store),
        upsert: (externalId: string, data: Static<typeof UpsertEmailMessage>) => services.emailMessages.upsertByExternalId(db, org, actor, externalId, data, store),
      });
      return {
        ...bind(),
        // In batch (domain/bulk/bulk-engine.ts): what the operations name read up front, their writes made together.
        batch: async () => {
          const { store, writes } = await services.emailMessages.batch(db, org, namedIn(body));
          return { executors: bind(store), writes };
        },
      };
    },
  }),
];
