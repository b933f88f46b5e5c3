// The /users API (docs/api-guide.md#users-roles-and-the-organisation). Every operation calls the users service with the caller's authority,
// the same functions the admin page and the CLI call.
import Type from 'typebox';
import { ApiError } from '../../errors/api-error.ts';
import { defineOperation, type OperationContext } from '../../operations/operation.ts';
import { ListQuery } from '../../operations/pagination.ts';
import { deleteByIdOperation, readByIdOperation, syncOperations, type ResourceName } from '../../operations/resource-operations.ts';
import { IdParams, ListEnvelope } from '../../operations/schemas.ts';
import { bulkOperation } from '../bulk/bulk.operation.ts';
import type { BulkTarget } from '../bulk/bulk-engine.ts';
import { CreateUser, UpdateUser, UpsertUser, User, UserListFilters, Invitation } from './users.schemas.ts';
import { authorityOf } from './users.service.ts';
import type { UserStore } from './users.store.ts';
import { BatchWrites } from '../bulk/batch-writes.ts';
import type { Static } from 'typebox';

const tag = 'Users';
const name: ResourceName = { singular: 'user', plural: 'users' };
const notFoundCode = 'user.not_found' as const;
const read = { scope: 'users:read', capability: 'person/view' } as const;
const write = { scope: 'users:write', capability: 'person/manage' } as const;
const example = { email: 'ada@example.edu', name: 'Ada Lovelace', roles: ['teacher'] };
// What setting `roles` or a user's status can meet besides the body's own checks.
const writeCodes = ['user.deleted', 'user.email_taken', 'user.last_admin', 'user.self', 'resource.external_id_taken'] as const;

const service = (ctx: OperationContext) => ctx.services.users;
const by = (ctx: OperationContext) => authorityOf(ctx.actor);

/** A bulk operation's target as an id: by id, or by the caller's external id (404 when there is none). */
async function targetId(ctx: OperationContext, target: BulkTarget, store?: UserStore): Promise<string> {
  if ('id' in target) return target.id;
  return (await service(ctx).getByExternalId(ctx.db, ctx.organisation.id, target.external_id, store)).id;
}

export const userOperations = [
  ...syncOperations({
    collection: 'users',
    resourceType: 'user',
    name,
    tag,
    item: User,
    notFoundCode,
    read,
    write,
    upsertBody: UpsertUser,
    upsertExample: example,
    upsertErrorCodes: [...writeCodes],
    getByExternalId: (ctx, ext) => service(ctx).getByExternalId(ctx.db, ctx.organisation.id, ext),
    upsertByExternalId: (ctx, ext, body) => service(ctx).upsertByExternalId(ctx.db, ctx.organisation.id, by(ctx), ext, body),
  }),
  defineOperation({
    id: 'listUsers',
    method: 'GET',
    path: '/users',
    tag,
    summary: 'List users',
    description: 'The organisation’s people in creation order (or in order of change with `updated_since`); removed ones only with `include_deleted=true`.',
    ...read,
    writes: false,
    query: Type.Object({ ...ListQuery, ...UserListFilters }, { additionalProperties: false }),
    success: { status: 200, schema: ListEnvelope(User), description: 'A page of users.' },
    errors: [422],
    handler: (ctx, { query }) => service(ctx).list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    id: 'getUser',
    collection: 'users',
    tag,
    summary: 'Read a user',
    description: 'A removed user is still readable, with `deleted_at` set.',
    ...read,
    notFoundCode,
    item: User,
    name,
    read: (ctx, id) => service(ctx).get(ctx.db, ctx.organisation.id, id),
  }),
  defineOperation({
    id: 'createUser',
    method: 'POST',
    path: '/users',
    tag,
    summary: 'Add a user',
    description:
      'Adds a person to the organisation, without a password: invite them (`POST /users/{id}/actions/invite`) to choose one. ' +
      'The e-mail address is unique in any letter case (409 `user.email_taken`). Giving `roles` also needs the scope `roles:write` and the capability `role/assign`, and no role may allow what you may not do (403).',
    ...write,
    writes: true,
    idempotency: 'optional',
    emits: ['user.created'],
    body: CreateUser,
    bodyExample: example,
    errorCodes: [...writeCodes],
    success: { status: 201, schema: User, description: 'The new user.' },
    errors: [409, 422],
    handler: (ctx, { body }) => service(ctx).create(ctx.db, ctx.organisation.id, by(ctx), body),
  }),
  defineOperation({
    id: 'updateUser',
    method: 'PATCH',
    path: '/users/{id}',
    tag,
    summary: 'Change a user: name, e-mail address, roles, status',
    description:
      'Partial update. Suspending someone (`status: suspended`) ends their sessions and refuses their API keys and OAuth grants from the next request; ' +
      'you cannot suspend yourself (409 `user.self`) or the last active administrator (409 `user.last_admin`). Changing `roles` needs `roles:write` and `role/assign` too.',
    ...write,
    writes: true,
    idempotency: 'optional',
    emits: ['user.updated'],
    params: IdParams,
    body: UpdateUser,
    bodyExample: { name: 'Ada King', status: 'active' },
    notFoundCode,
    errorCodes: [...writeCodes],
    success: { status: 200, schema: User, description: 'The user as they are now.' },
    errors: [404, 409, 422],
    handler: (ctx, { params, body }) => service(ctx).update(ctx.db, ctx.organisation.id, by(ctx), params.id, body),
  }),
  deleteByIdOperation({
    id: 'deleteUser',
    collection: 'users',
    tag,
    summary: 'Remove a user',
    description:
      'Soft delete: the user signs in no more, and their sessions, API keys and OAuth grants are refused from the next request on every server. ' +
      'The record stays readable with `deleted_at` set (their e-mail address stays taken); the tombstone is in `/users/deletions`. Not yourself (409 `user.self`), not the last active administrator (409 `user.last_admin`).',
    scope: 'users:delete',
    capability: 'person/delete',
    notFoundCode,
    emits: ['user.deleted'],
    errorCodes: ['user.deleted', 'user.self', 'user.last_admin'],
    remove: (ctx, id) => service(ctx).remove(ctx.db, ctx.organisation.id, by(ctx), id),
  }),
  defineOperation({
    id: 'inviteUser',
    method: 'POST',
    path: '/users/{id}/actions/invite',
    tag,
    summary: 'Mail a user a link to choose a password',
    description:
      'Mails the user a one-time link to `/invitations/{token}`, good once and for 72 hours, where they choose a password and are signed in. ' +
      'Earlier links stay good until used or expired. No password ever travels through the API.',
    ...write,
    writes: true,
    idempotency: 'optional',
    emits: ['user.invited'],
    params: IdParams,
    notFoundCode,
    errorCodes: ['user.deleted', 'mail.unavailable'],
    success: {
      status: 201,
      schema: Invitation,
      description: 'The mail was handed over.',
    },
    errors: [404, 409, 502],
    // The mail goes out before the transaction opens: a mail server must never hold the database.
    prepare: (ctx, { params }) => service(ctx).sendInvitation(ctx.db, ctx.organisation.id, params.id),
    handler: (ctx, { params, prepared }) => service(ctx).recordInvitation(ctx.db, ctx.organisation.id, params.id, prepared as { tokenHash: string; expiresAt: string }),
  }),
  bulkOperation({
    id: 'bulkUsers',
    collection: 'users',
    tag,
    summary: 'Apply up to 500 user operations',
    description:
      '`delete` also needs the scope `users:delete` and the capability `person/delete` (else that operation reports 403). ' +
      'An `upsert` that finds the person already as asked writes nothing (no `updated_at` change, no event) and its result says `unchanged: true`.',
    ...write,
    item: User,
    emits: ['user.created', 'user.updated', 'user.deleted'],
    operations: { create: { data: CreateUser }, update: { data: UpdateUser }, upsert: { data: UpsertUser }, delete: {} },
    example: { ref: 'ada', op: 'create', data: example },
    executors(ctx, body) {
      const { db } = ctx;
      const org = ctx.organisation.id;
      const svc = service(ctx);
      // The same service functions, reading and writing at once (no store) or through a batch's (users.store.ts).
      const bind = (store?: UserStore) => ({
        create: (data: Static<typeof CreateUser>, externalId: string | undefined) => svc.create(db, org, by(ctx), externalId === undefined ? data : { ...data, external_id: externalId }, {}, store),
        update: async (target: BulkTarget, data: Static<typeof UpdateUser>) => svc.update(db, org, by(ctx), await targetId(ctx, target, store), data, store),
        upsert: (externalId: string, data: Static<typeof UpsertUser>) => svc.upsertByExternalId(db, org, by(ctx), externalId, data, store),
        async delete(target: BulkTarget) {
          if (!ctx.actor.scopes.has('users:delete')) throw new ApiError('auth.insufficient_scope', 'Removing a user needs the scope `users:delete`, which the credential was not granted.');
          if (!ctx.actor.capabilities.has('person/delete')) throw new ApiError('auth.missing_capability', 'Removing a user needs the capability `person/delete`, which you do not have in this organisation.');
          await svc.remove(db, org, by(ctx), await targetId(ctx, target));
        },
      });
      return {
        ...bind(),
        upsertProbe: (externalId, data) => svc.unchangedUpsert(db, org, externalId, data),
        batch: async () => {
          const writes = new BatchWrites(ctx.services.events);
          const store = await svc.batch(db, org, body.operations, writes);
          return store && { executors: bind(store), writes };
        },
      };
    },
  }),
];
