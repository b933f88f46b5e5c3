// Operations every syncable resource has in the same shape (spec: Conventions — Changes since, External ids):
// `GET /<collection>/deletions`, `GET /<collection>/ext:{external_id}`, `PUT /<collection>/ext:{external_id}`.
// A resource gets them by calling this with its schemas and service functions.
import Type, { type TSchema } from 'typebox';
import type { Capability, Scope } from '../access/capabilities.ts';
import type { ErrorCode } from '../errors/error-catalog.ts';
import type { EventType } from '../events/catalog.ts';
import { defineOperation, Outcome, type Operation, type OperationContext } from './operation.ts';
import { PageQuery } from './pagination.ts';
import { ExternalId, IdParams, ListEnvelope, Nullable, Timestamp, Uuid } from './schemas.ts';

export const Tombstone = Type.Object(
  { id: Uuid(), external_id: Nullable(Type.String()), deleted_at: Timestamp() },
  { additionalProperties: false, description: 'A deleted resource.' },
);

const ExternalIdParams = Type.Object({ external_id: ExternalId }, { additionalProperties: false });

export interface SyncOperationsSpec {
  collection: string;
  /** Singular name, as in `deletions.resource_type` and error details. */
  resourceType: string;
  tag: string;
  item: TSchema;
  notFoundCode: ErrorCode;
  read: { scope: Scope; capability: Capability };
  write: { scope: Scope; capability: Capability };
  upsertBody: TSchema;
  upsertExample: unknown;
  getByExternalId(ctx: OperationContext, externalId: string): Promise<unknown>;
  /** The events an upsert writes: its resource's created and updated events. */
  upsertEmits: EventType[];
  /** What the upsert's service can refuse besides the derived codes (`Operation.errorCodes`). */
  upsertErrorCodes: ErrorCode[];
  /** Creates or updates; `created` says which (201 or 200). */
  upsertByExternalId(ctx: OperationContext, externalId: string, body: any): Promise<{ created: boolean; view: unknown }>;
}

const capitalise = (s: string) => s.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

export function syncOperations(spec: SyncOperationsSpec): Operation[] {
  const { collection, resourceType, tag } = spec;
  return [
    defineOperation({
      id: `listDeleted${capitalise(collection)}`,
      method: 'GET',
      path: `/${collection}/deletions`,
      tag,
      summary: `List deleted ${collection}`,
      description: `Tombstones of deleted ${collection}, in order of deletion. Combine with \`updated_since\` on the list to keep a copy in sync.`,
      scope: spec.read.scope,
      capability: spec.read.capability,
      writes: false,
      query: Type.Object(
        { ...PageQuery, since: Type.Optional(Type.String({ format: 'date-time', description: 'Only deletions after this RFC 3339 time.' })) },
        { additionalProperties: false },
      ),
      success: { status: 200, schema: ListEnvelope(Tombstone), description: 'A page of tombstones.' },
      errors: [422],
      handler: (ctx, { query }) => ctx.services.deletions.list(ctx.db, ctx.organisation.id, resourceType, query),
    }),
    defineOperation({
      id: `get${capitalise(resourceType)}ByExternalId`,
      method: 'GET',
      path: `/${collection}/ext:{external_id}`,
      tag,
      summary: `Read a ${resourceType} by external_id`,
      scope: spec.read.scope,
      capability: spec.read.capability,
      writes: false,
      params: ExternalIdParams,
      notFoundCode: spec.notFoundCode,
      success: { status: 200, schema: spec.item, description: `The ${resourceType}.` },
      errors: [404],
      handler: (ctx, { params }) => spec.getByExternalId(ctx, params.external_id),
    }),
    defineOperation({
      id: `upsert${capitalise(resourceType)}ByExternalId`,
      method: 'PUT',
      path: `/${collection}/ext:{external_id}`,
      tag,
      summary: `Create or update a ${resourceType} by external_id`,
      description: `Creates the ${resourceType} with this external_id (201) or updates the existing one (200).`,
      scope: spec.write.scope,
      capability: spec.write.capability,
      writes: true,
      idempotency: 'optional',
      emits: spec.upsertEmits,
      params: ExternalIdParams,
      body: spec.upsertBody,
      bodyExample: spec.upsertExample,
      notFoundCode: spec.notFoundCode,
      errorCodes: spec.upsertErrorCodes,
      success: { status: 201, alsoStatuses: [200], schema: spec.item, description: 'Created (201) or updated (200).' },
      errors: [409, 422],
      async handler(ctx, { params, body }) {
        const { created, view } = await spec.upsertByExternalId(ctx, params.external_id, body);
        return new Outcome(created ? 201 : 200, view);
      },
    }),
  ];
}

interface ByIdSpec {
  id: string;
  /** The collection in the path: `/<collection>/{id}`. */
  collection: string;
  tag: string;
  summary: string;
  description?: string;
  scope: Scope;
  capability: Capability;
  notFoundCode: ErrorCode;
}

/** `GET /<collection>/{id}`: the shape every resource's read has. */
export function readByIdOperation(spec: ByIdSpec & { item: TSchema; itemName: string; read(ctx: OperationContext, id: string): Promise<unknown> }): Operation {
  return defineOperation({
    id: spec.id,
    method: 'GET',
    path: `/${spec.collection}/{id}`,
    tag: spec.tag,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    scope: spec.scope,
    capability: spec.capability,
    writes: false,
    params: IdParams,
    notFoundCode: spec.notFoundCode,
    success: { status: 200, schema: spec.item, description: `The ${spec.itemName}.` },
    errors: [404],
    handler: (ctx, { params }) => spec.read(ctx, params.id),
  });
}

/** `DELETE /<collection>/{id}` answering 204: the shape every resource's delete has. */
export function deleteByIdOperation(
  spec: ByIdSpec & { emits: EventType[]; errors?: number[]; errorCodes?: ErrorCode[]; remove(ctx: OperationContext, id: string): Promise<void> },
): Operation {
  return defineOperation({
    id: spec.id,
    method: 'DELETE',
    path: `/${spec.collection}/{id}`,
    tag: spec.tag,
    summary: spec.summary,
    ...(spec.description ? { description: spec.description } : {}),
    scope: spec.scope,
    capability: spec.capability,
    writes: true,
    destructive: true,
    idempotency: 'optional',
    emits: spec.emits,
    params: IdParams,
    notFoundCode: spec.notFoundCode,
    success: { status: 204, description: 'Deleted.' },
    errors: spec.errors ?? [404, 409],
    ...(spec.errorCodes ? { errorCodes: spec.errorCodes } : {}),
    handler: (ctx, { params }) => spec.remove(ctx, params.id),
  });
}
