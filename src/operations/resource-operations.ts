// Operations every resource has in the same shape, so that a declaration says only what is its own (its id,
// summary, access, events, body and handler) and the method, path, statuses and success answer follow:
// - `GET /<collection>`, `GET|PATCH|DELETE /<collection>/{id}`, `POST /<collection>` (listOperation,
//   readByIdOperation, updateOperation, deleteByIdOperation, createOperation);
// - for a syncable resource (spec: Conventions — Changes since, External ids), `GET /<collection>/deletions`,
//   `GET /<collection>/ext:{external_id}`, `PUT /<collection>/ext:{external_id}` (syncOperations).
import Type, { type TSchema } from 'typebox';
import type { Capability, Scope } from '../access/capabilities.ts';
import type { ErrorCode } from '../errors/error-catalog.ts';
import type { EventType } from '../events/catalog.ts';
import type { Db } from '../db/database.ts';
import type { MaybeAsync } from '../maybe-async.ts';
import { defineOperation, Outcome, type Operation, type OperationContext, type OperationInput } from './operation.ts';
import { PageQuery } from './pagination.ts';
import { ExternalId, IdParams, ListEnvelope, named, Nullable, Timestamp, Uuid } from './schemas.ts';

export const Tombstone = named(
  'Tombstone',
  Type.Object({ id: Uuid(), external_id: Nullable(Type.String()), deleted_at: Timestamp() }, { additionalProperties: false, description: 'A deleted resource.' }),
);

/**
 * How summaries, descriptions, MCP tool descriptions and error pages name a resource: `wiki page` and
 * `wiki pages`, never the `wiki_page` of paths and payloads. Declared once per resource, next to its operations.
 */
export interface ResourceName {
  singular: string;
  plural: string;
}

/** `an activity`, `a section`: the article goes by the sound, so `a unique`, `a user`, `an upload`. */
export function withArticle(noun: string): string {
  const vowelSound = /^[aeiou]/i.test(noun) && !/^(uni|use|usu|ure|eu|one)/i.test(noun);
  return `${vowelSound ? 'an' : 'a'} ${noun}`;
}

/** The description of a PATCH that says no more than what every PATCH does. */
export const PARTIAL_UPDATE = 'Partial update: fields absent from the body are left as they are.';

const ExternalIdParams = Type.Object({ external_id: ExternalId }, { additionalProperties: false });

/**
 * What every declaration of one resource says alike: declared once next to its operations and spread into each
 * helper's spec (a helper takes what it needs of it).
 */
export interface Resource {
  collection: string;
  /** Singular name, as in `deletions.resource_type`, event names and error details. */
  resourceType: string;
  name: ResourceName;
  tag: string;
  item: TSchema;
  notFoundCode: ErrorCode;
}

/** A service whose external-id read and upsert take the organisation and the external id and nothing else of the request. */
export interface ExternalIdService {
  getByExternalId(db: Db, organisationId: string, externalId: string): Promise<unknown>;
  /** Creates or updates; `created` says which (201 or 200). */
  upsertByExternalId(db: Db, organisationId: string, externalId: string, body: any): Promise<{ created: boolean; view: unknown }>;
}

interface ExternalIdHandlers {
  getByExternalId(ctx: OperationContext, externalId: string): Promise<unknown>;
  /** Creates or updates; `created` says which (201 or 200). */
  upsertByExternalId(ctx: OperationContext, externalId: string, body: any): Promise<{ created: boolean; view: unknown }>;
}

export type SyncOperationsSpec = Resource & {
  read: { scope: Scope; capability: Capability };
  write: { scope: Scope; capability: Capability };
  upsertBody: TSchema;
  upsertExample: unknown;
  /** What the upsert's service can refuse besides the derived codes (`Operation.errorCodes`). */
  upsertErrorCodes: ErrorCode[];
} & (
  | { /** The service, when its read and upsert need nothing of the request but the organisation. */ service(ctx: OperationContext): ExternalIdService }
  | ExternalIdHandlers
);

/** The handlers of a spec, made from its service where it names one. */
function externalIdHandlers(spec: SyncOperationsSpec): ExternalIdHandlers {
  if (!('service' in spec)) return spec;
  return {
    getByExternalId: (ctx, externalId) => spec.service(ctx).getByExternalId(ctx.db, ctx.organisation.id, externalId),
    upsertByExternalId: (ctx, externalId, body) => spec.service(ctx).upsertByExternalId(ctx.db, ctx.organisation.id, externalId, body),
  };
}

const capitalise = (s: string) => s.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase());

export function syncOperations(spec: SyncOperationsSpec): Operation[] {
  const { collection, resourceType, tag, name } = spec;
  const handlers = externalIdHandlers(spec);
  return [
    defineOperation({
      id: `listDeleted${capitalise(collection)}`,
      method: 'GET',
      path: `/${collection}/deletions`,
      tag,
      summary: `List deleted ${name.plural}`,
      description: `Tombstones of deleted ${name.plural}, in order of deletion. Combine with \`updated_since\` on the list to keep a copy in sync.`,
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
      summary: `Read ${withArticle(name.singular)} by external_id`,
      scope: spec.read.scope,
      capability: spec.read.capability,
      writes: false,
      params: ExternalIdParams,
      notFoundCode: spec.notFoundCode,
      success: { status: 200, schema: spec.item, description: `The ${name.singular}.` },
      errors: [404],
      handler: (ctx, { params }) => handlers.getByExternalId(ctx, params.external_id),
    }),
    defineOperation({
      id: `upsert${capitalise(resourceType)}ByExternalId`,
      method: 'PUT',
      path: `/${collection}/ext:{external_id}`,
      tag,
      summary: `Create or update ${withArticle(name.singular)} by external_id`,
      description: `Creates the ${name.singular} with this \`external_id\` (201) or updates the existing one (200).`,
      scope: spec.write.scope,
      capability: spec.write.capability,
      writes: true,
      idempotency: 'optional',
      // An upsert writes its resource's created or updated event.
      emits: [`${resourceType}.created`, `${resourceType}.updated`] as EventType[],
      params: ExternalIdParams,
      body: spec.upsertBody,
      bodyExample: spec.upsertExample,
      notFoundCode: spec.notFoundCode,
      errorCodes: spec.upsertErrorCodes,
      success: { status: 201, alsoStatuses: [200], schema: spec.item, description: 'Created (201) or updated (200).' },
      errors: [409, 422],
      async handler(ctx, { params, body }) {
        const { created, view } = await handlers.upsertByExternalId(ctx, params.external_id, body);
        return new Outcome(created ? 201 : 200, view);
      },
    }),
  ];
}

/** What every declaration a helper writes says of itself; the helper adds the method, path and statuses. */
export interface ResourceOperationSpec {
  /** OpenAPI operationId and MCP tool name. */
  id: string;
  /** The collection in the path: `/<collection>`, `/<collection>/{id}`. */
  collection: string;
  tag: string;
  summary: string;
  description?: string;
  scope: Scope;
  capability: Capability;
}

// Optional fields are left out of the declaration when not given, as a declaration written out would.
const declared = <T extends object>(fields: T) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as Partial<T>;

const basics = (spec: ResourceOperationSpec) => ({
  id: spec.id,
  tag: spec.tag,
  summary: spec.summary,
  ...declared({ description: spec.description }),
  scope: spec.scope,
  capability: spec.capability,
});

interface ByIdSpec extends ResourceOperationSpec {
  notFoundCode: ErrorCode;
}

/** Where an operation on one item is: `/<collection>/{id}`, the id in the path, and the 404 of an id that cannot exist. */
const byId = (spec: ByIdSpec) => ({ path: `/${spec.collection}/{id}`, params: IdParams, notFoundCode: spec.notFoundCode });

/** `GET /<collection>/{id}`: the shape every resource's read has. */
export function readByIdOperation(spec: ByIdSpec & { item: TSchema; name: ResourceName; read(ctx: OperationContext, id: string): MaybeAsync<unknown> }): Operation {
  return defineOperation({
    ...basics(spec),
    method: 'GET',
    ...byId(spec),
    writes: false,
    success: { status: 200, schema: spec.item, description: `The ${spec.name.singular}.` },
    errors: [404],
    handler: (ctx, { params }) => spec.read(ctx, params.id),
  });
}

/** `DELETE /<collection>/{id}` answering 204: the shape every resource's delete has. */
export function deleteByIdOperation(
  spec: ByIdSpec & { emits: EventType[]; errors?: number[]; errorCodes?: ErrorCode[]; remove(ctx: OperationContext, id: string): Promise<void> },
): Operation {
  return defineOperation({
    ...basics(spec),
    method: 'DELETE',
    ...byId(spec),
    writes: true,
    destructive: true,
    idempotency: 'optional',
    emits: spec.emits,
    success: { status: 204, description: 'Deleted.' },
    errors: spec.errors ?? [404, 409],
    ...declared({ errorCodes: spec.errorCodes }),
    handler: (ctx, { params }) => spec.remove(ctx, params.id),
  });
}

/** A create or an update: what the declaration says, with its handler (and `prepare`, for a write that waits on the network). */
interface WriteSpec<P extends TSchema | undefined, B extends TSchema> extends ResourceOperationSpec {
  emits: EventType[];
  /** What the service can refuse besides the derived codes (`Operation.errorCodes`). */
  errorCodes?: ErrorCode[];
  body: B;
  bodyExample: unknown;
  /** The success answer's schema; its description names the item by `name.singular`. */
  item: TSchema;
  name: ResourceName;
  /** Replaces the success description made from `name`. */
  successDescription?: string;
  prepare?(ctx: OperationContext, input: OperationInput<P, undefined, B>): Promise<unknown>;
  prepares?(input: OperationInput<P, undefined, B>): boolean;
  /** A value at once where nothing waits (SQLite, in the write's transaction: src/maybe-async.ts). */
  handler(ctx: OperationContext, input: OperationInput<P, undefined, B>): MaybeAsync<unknown>;
}

function writeOperation<P extends TSchema | undefined, B extends TSchema>(
  spec: WriteSpec<P, B>,
  shape: Pick<Operation<P, undefined, B>, 'method' | 'path' | 'params' | 'notFoundCode' | 'success' | 'errors'>,
): Operation {
  return defineOperation<P, undefined, B>({
    ...basics(spec),
    ...shape,
    writes: true,
    idempotency: 'optional',
    emits: spec.emits,
    ...declared({ errorCodes: spec.errorCodes, prepare: spec.prepare, prepares: spec.prepares }),
    body: spec.body,
    bodyExample: spec.bodyExample,
    handler: spec.handler,
  });
}

/** `POST /<collection>` answering 201 with the new item: the shape every resource's create has. */
export function createOperation<B extends TSchema>(spec: WriteSpec<undefined, B> & { errors?: number[] }): Operation {
  return writeOperation(spec, {
    method: 'POST',
    path: `/${spec.collection}`,
    success: { status: 201, schema: spec.item, description: spec.successDescription ?? `The new ${spec.name.singular}.` },
    errors: spec.errors ?? [409, 422],
  });
}

/** `PATCH /<collection>/{id}` answering 200 with the item as it is now: the shape every resource's update has. */
export function updateOperation<B extends TSchema>(spec: WriteSpec<typeof IdParams, B> & { notFoundCode: ErrorCode }): Operation {
  return writeOperation(spec, {
    method: 'PATCH',
    ...byId(spec),
    success: { status: 200, schema: spec.item, description: spec.successDescription ?? `The ${spec.name.singular} as it is now.` },
    errors: [404, 409, 422],
  });
}

/** `GET /<collection>` answering a page of items: the shape every resource's list has. */
export function listOperation<Q extends TSchema>(
  spec: ResourceOperationSpec & {
    query: Q;
    item: TSchema;
    /** Its plural names the items, as in "A page of sections." */
    name: ResourceName;
    /** Replaces the success description made from `name`. */
    successDescription?: string;
    handler(ctx: OperationContext, input: OperationInput<undefined, Q, undefined>): Promise<unknown>;
  },
): Operation {
  return defineOperation<undefined, Q, undefined>({
    ...basics(spec),
    method: 'GET',
    path: `/${spec.collection}`,
    writes: false,
    query: spec.query,
    success: { status: 200, schema: ListEnvelope(spec.item), description: spec.successDescription ?? `A page of ${spec.name.plural}.` },
    errors: [422],
    handler: spec.handler,
  });
}
