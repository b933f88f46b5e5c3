// /roles, /roles/{key} and /capabilities (docs/api-guide.md#users-roles-and-the-organisation).
import Type from 'typebox';
import { defineOperation } from '../../operations/operation.ts';
import { PageQuery } from '../../operations/pagination.ts';
import { listOperation } from '../../operations/resource-operations.ts';
import { CapabilityList, CreateRole, Role, RoleParams, UpdateRole } from './roles.schemas.ts';
import { capabilityCatalog } from './roles.service.ts';

const tag = 'Roles';
const notFoundCode = 'role.not_found' as const;
// Reading roles is part of seeing people (what their roles allow); changing them is administration.
const read = { scope: 'roles:read', capability: 'person/view' } as const;
const manage = { scope: 'roles:write', capability: 'role/manage' } as const;
const example = { key: 'librarian', name: 'Librarian', capabilities: ['course/view', 'file/upload', 'file/view'] };

export const roleOperations = [
  defineOperation({
    id: 'listCapabilities',
    method: 'GET',
    path: '/capabilities',
    tag,
    summary: 'List every capability',
    description: 'The catalogue roles are made from: each capability’s name and, in one sentence, what it allows. Any valid credential may read it.',
    scope: null,
    capability: null,
    writes: false,
    success: { status: 200, schema: CapabilityList, description: 'Every capability.' },
    errors: [],
    handler: async () => ({ data: capabilityCatalog() }),
  }),
  listOperation({
    id: 'listRoles',
    collection: 'roles',
    name: { singular: 'role', plural: 'roles' },
    tag,
    summary: 'List roles',
    description: 'The built-in roles first, then the organisation’s custom roles by key.',
    ...read,
    query: Type.Object({ ...PageQuery }, { additionalProperties: false }),
    item: Role,
    handler: (ctx, { query }) => ctx.services.roles.list(ctx.db, ctx.organisation.id, query),
  }),
  defineOperation({
    id: 'getRole',
    method: 'GET',
    path: '/roles/{key}',
    tag,
    summary: 'Read a role',
    ...read,
    writes: false,
    params: RoleParams,
    notFoundCode,
    success: { status: 200, schema: Role, description: 'The role.' },
    errors: [404],
    handler: (ctx, { params }) => ctx.services.roles.get(ctx.db, ctx.organisation.id, params.key),
  }),
  defineOperation({
    id: 'createRole',
    method: 'POST',
    path: '/roles',
    tag,
    summary: 'Create a custom role',
    description: 'A named set of capabilities from `GET /capabilities`; an unknown one is a 422 at its pointer. Give it to people with `PATCH /users/{id}`.',
    ...manage,
    writes: true,
    idempotency: 'optional',
    emits: ['role.created'],
    body: CreateRole,
    bodyExample: example,
    errorCodes: ['role.key_taken'],
    success: { status: 201, schema: Role, description: 'The new role.' },
    errors: [409, 422],
    handler: (ctx, { body }) => ctx.services.roles.create(ctx.db, ctx.organisation.id, body),
  }),
  defineOperation({
    id: 'updateRole',
    method: 'PATCH',
    path: '/roles/{key}',
    tag,
    summary: 'Rename a custom role or change what it allows',
    description: 'Every holder may do what the role now allows from their next request, on every server. Built-in roles cannot change (409 `role.built_in`).',
    ...manage,
    writes: true,
    idempotency: 'optional',
    emits: ['role.updated'],
    params: RoleParams,
    body: UpdateRole,
    bodyExample: { capabilities: ['course/view', 'file/view'] },
    notFoundCode,
    errorCodes: ['role.built_in'],
    success: { status: 200, schema: Role, description: 'The role as it is now.' },
    errors: [404, 409, 422],
    handler: (ctx, { params, body }) => ctx.services.roles.update(ctx.db, ctx.organisation.id, params.key, body),
  }),
  defineOperation({
    id: 'deleteRole',
    method: 'DELETE',
    path: '/roles/{key}',
    tag,
    summary: 'Delete a custom role',
    description: 'Only while nobody holds it (409 `role.in_use`); built-in roles cannot be deleted (409 `role.built_in`).',
    ...manage,
    writes: true,
    destructive: true,
    idempotency: 'optional',
    emits: ['role.deleted'],
    params: RoleParams,
    notFoundCode,
    errorCodes: ['role.built_in', 'role.in_use'],
    success: { status: 204, description: 'Deleted.' },
    errors: [404, 409],
    handler: (ctx, { params }) => ctx.services.roles.remove(ctx.db, ctx.organisation.id, params.key),
  }),
];
