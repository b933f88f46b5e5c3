import Type from 'typebox';
import { defineOperation } from '../../operations/operation.ts';
import { ListQuery } from '../../operations/pagination.ts';
import { createOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type ResourceName } from '../../operations/resource-operations.ts';
import { IdParams, Uuid } from '../../operations/schemas.ts';
import { CreateEnrolmentMethod, DeleteEnrolmentMethodQuery, EnrolmentMethod, UpdateEnrolmentMethod, UpsertEnrolmentMethod } from './enrolment-methods.schemas.ts';

const tag = 'Enrolment methods';
const name: ResourceName = { singular: 'enrolment method', plural: 'enrolment methods' };
const notFoundCode = 'enrolment_method.not_found' as const;
const capability = 'enrol/configure_method' as const;
const example = { course_id: '0193a5b2-7c1d-7000-8000-000000000001', type: 'self', name: 'Self enrolment (key)', settings: { enrolment_key: 'stats-2027' } };

export const enrolmentMethodOperations = [
  listOperation({
    id: 'listEnrolmentMethods',
    collection: 'enrolment_methods',
    tag,
    summary: 'List enrolment methods',
    scope: 'enrolments:read',
    capability,
    query: Type.Object({ ...ListQuery, course_id: Type.Optional(Uuid({ description: 'Only methods of this course.' })) }, { additionalProperties: false }),
    item: EnrolmentMethod,
    name,
    handler: (ctx, { query }) => ctx.services.enrolmentMethods.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    id: 'getEnrolmentMethod',
    collection: 'enrolment_methods',
    tag,
    summary: 'Read an enrolment method',
    scope: 'enrolments:read',
    capability,
    notFoundCode,
    item: EnrolmentMethod,
    name,
    read: (ctx, id) => ctx.services.enrolmentMethods.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    id: 'createEnrolmentMethod',
    collection: 'enrolment_methods',
    errorCodes: ['course.deleted', 'extension.disabled', 'resource.external_id_taken'],
    tag,
    summary: 'Add an enrolment method to a course',
    description: 'The type must be an enrolment-method extension switched on in this organisation (409 `extension.disabled` otherwise).',
    scope: 'enrolments:write',
    capability,
    emits: ['enrolment_method.created'],
    body: CreateEnrolmentMethod,
    bodyExample: example,
    item: EnrolmentMethod,
    name,
    handler: (ctx, { body }) => ctx.services.enrolmentMethods.create(ctx.db, ctx.organisation.id, body),
  }),
  updateOperation({
    id: 'updateEnrolmentMethod',
    collection: 'enrolment_methods',
    errorCodes: ['enrolment_method.deleted'],
    tag,
    summary: 'Update an enrolment method',
    description: 'Partial update. `settings` replaces the settings as a whole and must suit the method’s type.',
    scope: 'enrolments:write',
    capability,
    emits: ['enrolment_method.updated'],
    body: UpdateEnrolmentMethod,
    bodyExample: { status: 'disabled' },
    notFoundCode,
    item: EnrolmentMethod,
    name,
    handler: (ctx, { params, body }) => ctx.services.enrolmentMethods.update(ctx.db, ctx.organisation.id, params.id, body),
  }),
  defineOperation({
    id: 'deleteEnrolmentMethod',
    errorCodes: ['enrolment_method.deleted', 'enrolment_method.has_enrolments'],
    method: 'DELETE',
    path: '/enrolment_methods/{id}',
    tag,
    summary: 'Delete an enrolment method',
    description:
      'Soft delete. A method that still has active enrolments is refused with 409 `enrolment_method.has_enrolments` unless `unenrol=true`, ' +
      'which ends those enrolments with it (the people lose access through this method). A method already deleted: 409 `enrolment_method.deleted`.',
    scope: 'enrolments:delete',
    capability,
    writes: true,
    destructive: true,
    idempotency: 'optional',
    emits: ['enrolment_method.deleted', 'enrolment.deleted'],
    params: IdParams,
    query: DeleteEnrolmentMethodQuery,
    notFoundCode,
    success: { status: 204, description: 'Deleted.' },
    errors: [404, 409, 422],
    handler: (ctx, { params, query }) => ctx.services.enrolmentMethods.remove(ctx.db, ctx.organisation.id, params.id, { unenrol: query.unenrol ?? false }),
  }),
  ...syncOperations({
    collection: 'enrolment_methods',
    resourceType: 'enrolment_method',
    name,
    upsertErrorCodes: ['course.deleted', 'extension.disabled', 'enrolment_method.deleted', 'resource.external_id_taken'],
    upsertEmits: ['enrolment_method.created', 'enrolment_method.updated'],
    tag,
    item: EnrolmentMethod,
    notFoundCode,
    read: { scope: 'enrolments:read', capability },
    write: { scope: 'enrolments:write', capability },
    upsertBody: UpsertEnrolmentMethod,
    upsertExample: example,
    getByExternalId: (ctx, ext) => ctx.services.enrolmentMethods.getByExternalId(ctx.db, ctx.organisation.id, ext),
    upsertByExternalId: (ctx, ext, body) => ctx.services.enrolmentMethods.upsertByExternalId(ctx.db, ctx.organisation.id, ext, body),
  }),
];
