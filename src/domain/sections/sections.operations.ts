import Type from 'typebox';
import { ListQuery } from '../../operations/pagination.ts';
import { createOperation, deleteByIdOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type Resource } from '../../operations/resource-operations.ts';
import { Uuid } from '../../operations/schemas.ts';
import { CreateSection, Section, UpdateSection, UpsertSection } from './sections.schemas.ts';

const section: Resource = { collection: 'sections', resourceType: 'section', name: { singular: 'section', plural: 'sections' }, tag: 'Sections', item: Section, notFoundCode: 'section.not_found' };
const read = { scope: 'courses:read', capability: 'course/view' } as const;
const write = { scope: 'courses:write', capability: 'course/update' } as const;

export const sectionOperations = [
  ...syncOperations({
    ...section,
    upsertErrorCodes: ['course.deleted', 'section.deleted', 'resource.external_id_taken'],
    read,
    write,
    upsertBody: UpsertSection,
    upsertExample: { course_id: '0193a5b2-7c1d-7000-8000-000000000001', title: 'Week 1', visible: true },
    service: (ctx) => ctx.services.sections,
  }),
  listOperation({
    ...section,
    id: 'listSections',
    summary: 'List sections',
    description: 'Sections in creation order, optionally of one course.',
    ...read,
    query: Type.Object({ ...ListQuery, course_id: Type.Optional(Uuid({ description: 'Only sections of this course.' })) }, { additionalProperties: false }),
    handler: (ctx, { query }) => ctx.services.sections.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    ...section,
    id: 'getSection',
    summary: 'Read a section',
    description: 'A deleted section is still readable, with `deleted_at` set.',
    ...read,
    read: (ctx, id) => ctx.services.sections.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    ...section,
    id: 'createSection',
    summary: 'Create a section',
    description: 'Appends a section at the end of its course.',
    ...write,
    emits: ['section.created'],
    errorCodes: ['course.deleted', 'resource.external_id_taken'],
    body: CreateSection,
    bodyExample: { course_id: '0193a5b2-7c1d-7000-8000-000000000001', title: 'Week 1', visible: true },
    handler: (ctx, { body }) => ctx.services.sections.create(ctx.db, ctx.organisation.id, body),
  }),
  updateOperation({
    ...section,
    id: 'updateSection',
    summary: 'Rename a section, or show or hide it',
    description: 'Partial update: fields absent from the body are left as they are. A deleted section cannot change (409).',
    ...write,
    emits: ['section.updated'],
    errorCodes: ['section.deleted'],
    body: UpdateSection,
    bodyExample: { title: 'Week 1: Foundations', visible: false },
    handler: (ctx, { params, body }) => ctx.services.sections.update(ctx.db, ctx.organisation.id, params.id, body),
  }),
  deleteByIdOperation({
    ...section,
    id: 'deleteSection',
    errorCodes: ['section.deleted'],
    emits: ['section.deleted'],
    summary: 'Delete a section',
    description: 'Soft delete: the section keeps its row with `deleted_at` set and leaves lists unless `include_deleted=true`.',
    scope: 'courses:delete',
    capability: 'course/update',
    remove: (ctx, id) => ctx.services.sections.remove(ctx.db, ctx.organisation.id, id),
  }),
];
