import Type from 'typebox';
import { defineOperation } from '../../operations/operation.ts';
import { Extension } from './extensions.schemas.ts';
import { namedAfter } from '../../operations/schemas.ts';

export const extensionOperations = [
  defineOperation({
    id: 'listExtensions',
    method: 'GET',
    path: '/extensions',
    tag: 'Extensions',
    summary: 'List extensions and their state',
    description: 'Every compiled-in extension with whether it is switched on here. Switching is done at `/admin/extensions`.',
    scope: 'tenants:read',
    capability: 'tenant/configure',
    writes: false,
    success: { status: 200, schema: namedAfter(Extension, 'List', Type.Object({ data: Type.Array(Extension) }, { additionalProperties: false })), description: 'Every extension.' },
    errors: [],
    handler: async (ctx) => ({ data: await ctx.services.extensions.list(ctx.db, ctx.organisation.id) }),
  }),
];
