import Type from 'typebox';
import { ListQuery } from '../../operations/pagination.ts';
import { createOperation, deleteByIdOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type ResourceName } from '../../operations/resource-operations.ts';
import type { ErrorCode } from '../../errors/error-catalog.ts';
import { bulkOperation } from '../bulk/bulk.operation.ts';
import type { Static } from 'typebox';
import type { BulkRequestBody, BulkTarget } from '../bulk/bulk-engine.ts';
import type { EnrolmentStore } from './enrolments.writes.ts';
import type { NamedInBulk } from './enrolments.lookups.ts';
import { CreateEnrolment, Enrolment, ListEnrolmentsFilters, UpdateEnrolment, UpsertEnrolment } from './enrolments.schemas.ts';

const tag = 'Enrolments';
const name: ResourceName = { singular: 'enrolment', plural: 'enrolments' };
const notFoundCode = 'enrolment.not_found' as const;
const enrolment = { collection: 'enrolments', tag, item: Enrolment, name, notFoundCode } as const;
const read = { scope: 'enrolments:read', capability: 'enrol/view' } as const;
const write = { scope: 'enrolments:write', capability: 'enrol/manage' } as const;
const createRefusals: ErrorCode[] = ['course.deleted', 'user.deleted', 'enrolment_method.disabled', 'enrolment.exists', 'resource.external_id_taken'];
const example = {
  course_id: '0193a5b2-7c1d-7000-8000-000000000001',
  user_id: '0193a5b2-7c1d-7000-8000-000000000002',
  enrolment_method_id: '0193a5b2-7c1d-7000-8000-000000000003',
  role: 'student',
};

/** What a bulk request's operations name, so that one query per kind reads it all before any runs. */
function namedIn(body: BulkRequestBody): NamedInBulk {
  const enrolmentIds = new Set<string>();
  const externalIds = new Set<string>();
  const makes: NamedInBulk['makes'] = [];
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  for (const item of body.operations) {
    const data = item.data ?? {};
    // Plain statements, not a loop over pairs: this runs for each of up to 500 operations on every request.
    if (typeof item.id === 'string') enrolmentIds.add(item.id);
    if (typeof item.external_id === 'string') externalIds.add(item.external_id);
    if (typeof data.external_id === 'string') externalIds.add(data.external_id);
    if (item.op === 'create' || item.op === 'upsert') {
      makes.push({ courseId: text(data.course_id), personId: text(data.user_id), methodId: text(data.enrolment_method_id), upsertExternalId: item.op === 'upsert' ? item.external_id : undefined });
    }
  }
  return { enrolmentIds, externalIds, makes };
}

export const enrolmentOperations = [
  ...syncOperations({
    collection: 'enrolments',
    resourceType: 'enrolment',
    name,
    upsertErrorCodes: [...createRefusals, 'enrolment.deleted'],
    tag,
    item: Enrolment,
    notFoundCode,
    read,
    write,
    upsertBody: UpsertEnrolment,
    upsertExample: example,
    service: (ctx) => ctx.services.enrolments,
  }),
  listOperation({
    ...enrolment,
    id: 'listEnrolments',
    summary: 'List enrolments',
    description: 'Enrolments in creation order (or in order of change with `updated_since`), optionally of one course, one user or one status.',
    ...read,
    query: Type.Object({ ...ListQuery, ...ListEnrolmentsFilters }, { additionalProperties: false }),
    handler: (ctx, { query }) => ctx.services.enrolments.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    ...enrolment,
    id: 'getEnrolment',
    summary: 'Read an enrolment',
    description: 'A deleted (ended) enrolment is still readable, with `deleted_at` set.',
    ...read,
    read: (ctx, id) => ctx.services.enrolments.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    ...enrolment,
    id: 'createEnrolment',
    summary: 'Enrol a user in a course',
    description:
      'Through one of the course’s enrolment methods, which must be enabled; `role` defaults to the method’s role. ' +
      'A method of another course is a 422 at `/enrolment_method_id`; a disabled or deleted method a 409 `enrolment_method.disabled`; ' +
      'the same user already enrolled through that method a 409 `enrolment.exists`; a deleted course or user a 409 `course.deleted` / `user.deleted`.',
    ...write,
    emits: ['enrolment.created'],
    errorCodes: createRefusals,
    body: CreateEnrolment,
    bodyExample: example,
    handler: (ctx, { body }) => ctx.services.enrolments.create(ctx.db, ctx.organisation.id, body),
  }),
  updateOperation({
    ...enrolment,
    id: 'updateEnrolment',
    summary: 'Change an enrolment’s role, status or dates',
    description: 'Partial update: fields absent from the body are left as they are; a body that changes nothing writes nothing. A deleted enrolment cannot change (409).',
    ...write,
    emits: ['enrolment.updated'],
    errorCodes: ['enrolment.deleted'],
    body: UpdateEnrolment,
    bodyExample: { status: 'suspended', ends_at: '2027-06-30T23:59:59Z' },
    handler: (ctx, { params, body }) => ctx.services.enrolments.update(ctx.db, ctx.organisation.id, { id: params.id }, body),
  }),
  deleteByIdOperation({
    ...enrolment,
    id: 'deleteEnrolment',
    errorCodes: ['enrolment.deleted'],
    emits: ['enrolment.deleted'],
    summary: 'Unenrol: end an enrolment',
    description: 'Soft delete: the enrolment keeps its row with `deleted_at` set, leaves lists unless `include_deleted=true`, and its tombstone appears in `/enrolments/deletions`.',
    scope: 'enrolments:delete',
    capability: 'enrol/manage',
    remove: (ctx, id) => ctx.services.enrolments.remove(ctx.db, ctx.organisation.id, { id }),
  }),
  bulkOperation({
    id: 'bulkEnrolments',
    collection: 'enrolments',
    tag,
    summary: 'Create, change, upsert or end many enrolments',
    description:
      'For a roster sync: send the whole roster as `upsert`s by `external_id` every night. An upsert that finds the enrolment already as asked writes nothing ' +
      '(no `updated_at` change, no event) and its result says `unchanged: true`.',
    ...write,
    item: Enrolment,
    emits: ['enrolment.created', 'enrolment.updated', 'enrolment.deleted'],
    operations: { create: { data: CreateEnrolment }, update: { data: UpdateEnrolment }, upsert: { data: UpsertEnrolment }, delete: {} },
    example: { ref: 'enrol-1', op: 'upsert', external_id: 'sis-2027-bio101-s1234', data: example },
    executors(ctx, body) {
      const { db, organisation, services } = ctx;
      const svc = services.enrolments;
      const named = namedIn(body);
      const bind = (store: () => Promise<EnrolmentStore>) => ({
        create: async (data: Static<typeof CreateEnrolment>, externalId: string | undefined) =>
          svc.create(db, organisation.id, { ...data, ...(externalId !== undefined ? { external_id: externalId } : {}) }, await store()),
        update: async (target: BulkTarget, data: Static<typeof UpdateEnrolment>) => svc.update(db, organisation.id, target, data, await store()),
        upsert: async (externalId: string, data: Static<typeof UpsertEnrolment>) => svc.upsertByExternalId(db, organisation.id, externalId, data, await store()),
        delete: async (target: BulkTarget) => svc.remove(db, organisation.id, target, await store()),
      });
      // One by one (only when a batch could not be written): read once, when the first operation runs.
      let prefetched: Promise<EnrolmentStore> | undefined;
      const store = () => (prefetched ??= svc.prefetched(db, organisation.id, named));
      return {
        ...bind(store),
        upsertProbe: async (externalId, data) => svc.unchangedUpsert(externalId, data, await store()),
        batch: async () => {
          const { store: batched, writes } = await svc.batch(db, organisation.id, named);
          return { executors: bind(async () => batched), writes };
        },
      };
    },
  }),
];
