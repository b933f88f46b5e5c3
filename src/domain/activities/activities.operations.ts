import Type from 'typebox';
import { ListQuery } from '../../operations/pagination.ts';
import { createOperation, deleteByIdOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type Resource } from '../../operations/resource-operations.ts';
import { Uuid } from '../../operations/schemas.ts';
import { namesOfKind } from '../extensions/extensions.catalog.ts';
import { Activity, CreateActivity, UpdateActivity, UpsertActivity } from './activities.schemas.ts';

const activity: Resource = { collection: 'activities', resourceType: 'activity', name: { singular: 'activity', plural: 'activities' }, tag: 'Activities', item: Activity, notFoundCode: 'activity.not_found' };
const read = { scope: 'courses:read', capability: 'course/view' } as const;
const write = { scope: 'courses:write', capability: 'course/update' } as const;
const example = { course_id: '0193a5b2-7c1d-7000-8000-000000000001', type: 'wiki', name: 'Course glossary', settings: { mode: 'collaborative' } };

export const activityOperations = [
  ...syncOperations({
    ...activity,
    upsertErrorCodes: ['course.deleted', 'extension.disabled', 'activity.deleted', 'resource.external_id_taken'],
    read,
    write,
    upsertBody: UpsertActivity,
    upsertExample: example,
    service: (ctx) => ctx.services.activities,
  }),
  listOperation({
    ...activity,
    id: 'listActivities',
    summary: 'List activities',
    description: 'Activities in creation order, optionally of one course, section or type.',
    ...read,
    query: Type.Object(
      {
        ...ListQuery,
        course_id: Type.Optional(Uuid({ description: 'Only activities of this course.' })),
        section_id: Type.Optional(Uuid({ description: 'Only activities in this section.' })),
        type: Type.Optional(Type.Unsafe<string>({ type: 'string', enum: namesOfKind('activity_type'), description: 'Only activities of this type.' })),
      },
      { additionalProperties: false },
    ),
    handler: (ctx, { query }) => ctx.services.activities.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    ...activity,
    id: 'getActivity',
    summary: 'Read an activity',
    description: 'A deleted activity is still readable, with `deleted_at` set.',
    ...read,
    read: (ctx, id) => ctx.services.activities.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    ...activity,
    id: 'createActivity',
    errorCodes: ['course.deleted', 'extension.disabled', 'resource.external_id_taken'],
    emits: ['activity.created'],
    summary: 'Add an activity to a course',
    description:
      'The type is a compiled-in activity-type extension; while an administrator has it switched off, creating one is a 409 `extension.disabled`. A wiki activity gets its wiki, in the `mode` its settings give (collaborative unless said otherwise).',
    ...write,
    body: CreateActivity,
    bodyExample: example,
    handler: (ctx, { body }) => ctx.services.activities.create(ctx.db, ctx.organisation.id, body),
  }),
  updateOperation({
    ...activity,
    id: 'updateActivity',
    errorCodes: ['activity.deleted'],
    emits: ['activity.updated'],
    summary: 'Rename an activity or move it to another section',
    description: 'Partial update: fields absent from the body are left as they are. A deleted activity cannot change (409).',
    ...write,
    body: UpdateActivity,
    bodyExample: { name: 'Course glossary (2027)' },
    handler: (ctx, { params, body }) => ctx.services.activities.update(ctx.db, ctx.organisation.id, params.id, body),
  }),
  deleteByIdOperation({
    ...activity,
    id: 'deleteActivity',
    errorCodes: ['activity.deleted'],
    emits: ['activity.deleted'],
    summary: 'Delete an activity',
    description: 'Soft delete: the activity keeps its row with `deleted_at` set. Its pages stay readable and can no longer change (409 `activity.deleted`).',
    scope: 'courses:delete',
    capability: 'course/update',
    remove: (ctx, id) => ctx.services.activities.remove(ctx.db, ctx.organisation.id, id),
  }),
];
