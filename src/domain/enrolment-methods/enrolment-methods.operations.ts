import Type from 'typebox';
import { defineOperation } from '../../operations/operation.ts';
import { ListQuery } from '../../operations/pagination.ts';
import { createOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type Resource } from '../../operations/resource-operations.ts';
import { IdParams, Uuid } from '../../operations/schemas.ts';
import { CreateEnrolmentMethod, DeleteEnrolmentMethodQuery, EnrolmentMethod, UpdateEnrolmentMethod, UpsertEnrolmentMethod } from './enrolment-methods.schemas.ts';

const method: Resource = { collection: 'enrolment_methods', resourceType: 'enrolment_method', name: { singular: 'enrolment method', plural: 'enrolment methods' }, tag: 'Enrolment methods', item: EnrolmentMethod, notFoundCode: 'enrolment_method.not_found' };
const capability = 'enrol/configure_method' as const;
const read = { scope: 'enrolments:read', capability } as const;
const write = { scope: 'enrolments:write', capability } as const;
const example = { course_id: '0193a5b2-7c1d-7000-8000-000000000001', type: 'self', name: 'Self enrolment (key)', settings: { enrolment_key: 'stats-2027' } };

export const enrolmentMethodOperations = [
  listOperation({
    ...method,
    id: 'listEnrolmentMethods',
    summary: 'List enrolment methods',
    ...read,
    query: Type.Object({ ...ListQuery, course_id: Type.Optional(Uuid({ description: 'Only methods of this course.' })) }, { additionalProperties: false }),
    handler: (ctx, { query }) => ctx.services.enrolmentMethods.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    ...method,
    id: 'getEnrolmentMethod',
    summary: 'Read an enrolment method',
    ...read,
    read: (ctx, id) => ctx.services.enrolmentMethods.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    ...method,
    id: 'createEnrolmentMethod',
    errorCodes: ['course.deleted', 'extension.disabled', 'resource.external_id_taken'],
    summary: 'Add an enrolment method to a course',
    description: 'The type must be an enrolment-method extension switched on in this organisation (409 `extension.disabled` otherwise).',
    ...write,
    emits: ['enrolment_method.created'],
    body: CreateEnrolmentMethod,
    bodyExample: example,
    handler: (ctx, { body }) => ctx.services.enrolmentMethods.create(ctx.db, ctx.organisation.id, body),
  }),
  updateOperation({
    ...method,
    id: 'updateEnrolmentMethod',
    errorCodes: ['enrolment_method.deleted'],
    summary: 'Update an enrolment method',
    description: 'Partial update. `settings` replaces the settings as a whole and must suit the method’s type.',
    ...write,
    emits: ['enrolment_method.updated'],
    body: UpdateEnrolmentMethod,
    bodyExample: { status: 'disabled' },
    handler: (ctx, { params, body }) => ctx.services.enrolmentMethods.update(ctx.db, ctx.organisation.id, params.id, body),
  }),
  defineOperation({
    id: 'deleteEnrolmentMethod',
    errorCodes: ['enrolment_method.deleted', 'enrolment_method.has_enrolments'],
    method: 'DELETE',
    path: '/enrolment_methods/{id}',
    tag: method.tag,
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
    notFoundCode: method.notFoundCode,
    success: { status: 204, description: 'Deleted.' },
    errors: [404, 409, 422],
    handler: (ctx, { params, query }) => ctx.services.enrolmentMethods.remove(ctx.db, ctx.organisation.id, params.id, { unenrol: query.unenrol ?? false }),
  }),
  ...syncOperations({
    ...method,
    upsertErrorCodes: ['course.deleted', 'extension.disabled', 'enrolment_method.deleted', 'resource.external_id_taken'],
    read,
    write,
    upsertBody: UpsertEnrolmentMethod,
    upsertExample: example,
    service: (ctx) => ctx.services.enrolmentMethods,
  }),
];
