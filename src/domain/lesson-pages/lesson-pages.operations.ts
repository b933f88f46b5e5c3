import Type from 'typebox';
import { ListQuery } from '../../operations/pagination.ts';
import { createOperation, deleteByIdOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type ResourceName } from '../../operations/resource-operations.ts';
import { Uuid } from '../../operations/schemas.ts';
import { bulkOperation } from '../bulk/bulk.operation.ts';
import { CreateLessonPage, LessonPage, UpdateLessonPage, UpsertLessonPage } from './lesson-pages.schemas.ts';
import { lessonPageLookups } from './lesson-pages.service.ts';

const tag = 'Lesson pages';
const name: ResourceName = { singular: 'lesson page', plural: 'lesson pages' };
const notFoundCode = 'lesson_page.not_found' as const;
const read = { scope: 'courses:read', capability: 'course/view' } as const;
const manage = { scope: 'courses:write', capability: 'lesson/manage_pages' } as const;
const events = { created: 'lesson_page.created', updated: 'lesson_page.updated', deleted: 'lesson_page.deleted' } as const;
const example = {
  lesson_id: '0193a5b2-7c1d-7000-8000-000000000001',
  title: 'Which gas do plants take in?',
  page_type: 'multichoice',
  contents: { format: 'markdown', content: 'During photosynthesis, plants take in …' },
  answers: [
    { text: 'Carbon dioxide', response: 'Right.', score: 1, jump_to: 'next_page' },
    { text: 'Oxygen', response: 'Oxygen is what they give off.', score: 0, jump_to: 'this_page' },
  ],
};

export const lessonPageOperations = [
  ...syncOperations({
    collection: 'lesson_pages',
    resourceType: 'lesson_page',
    name,
    upsertErrorCodes: ['activity.deleted', 'lesson_page.deleted', 'resource.external_id_taken'],
    upsertEmits: [events.created, events.updated],
    tag,
    item: LessonPage,
    notFoundCode,
    read,
    write: manage,
    upsertBody: UpsertLessonPage,
    upsertExample: example,
    getByExternalId: (ctx, ext) => ctx.services.lessonPages.getByExternalId(ctx.db, ctx.organisation.id, ext),
    upsertByExternalId: (ctx, ext, body) => ctx.services.lessonPages.upsertByExternalId(ctx.db, ctx.organisation.id, ext, body),
  }),
  listOperation({
    id: 'listLessonPages',
    collection: 'lesson_pages',
    tag,
    summary: 'List lesson pages',
    description: 'Pages in lesson order (by lesson, then `sort_key`), optionally of one lesson; with `updated_since`, in order of change.',
    ...read,
    query: Type.Object({ ...ListQuery, lesson_id: Type.Optional(Uuid({ description: 'Only pages of this lesson activity.' })) }, { additionalProperties: false }),
    item: LessonPage,
    name,
    handler: (ctx, { query }) => ctx.services.lessonPages.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    id: 'getLessonPage',
    collection: 'lesson_pages',
    tag,
    summary: 'Read a lesson page',
    description: 'A deleted page is still readable, with `deleted_at` set.',
    ...read,
    notFoundCode,
    item: LessonPage,
    name,
    read: (ctx, id) => ctx.services.lessonPages.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    id: 'createLessonPage',
    collection: 'lesson_pages',
    errorCodes: ['activity.deleted', 'resource.external_id_taken'],
    emits: [events.created],
    tag,
    summary: 'Create a lesson page',
    description:
      'Adds a page to a lesson activity: at the end, or right after `after_page_id` (null: first). Its answers must suit its `page_type` (422 at `/answers`). A deleted lesson takes no new pages (409 `activity.deleted`).',
    ...manage,
    body: CreateLessonPage,
    bodyExample: example,
    item: LessonPage,
    name,
    successDescription: 'The new page.',
    handler: (ctx, { body }) => ctx.services.lessonPages.create(ctx.db, ctx.organisation.id, body),
  }),
  updateOperation({
    id: 'updateLessonPage',
    collection: 'lesson_pages',
    errorCodes: ['activity.deleted', 'lesson_page.deleted'],
    emits: [events.updated],
    tag,
    summary: 'Change or move a lesson page',
    description:
      'Partial update: fields absent from the body are left as they are; `answers` replaces the whole list; `after_page_id` moves the page (null: first). A deleted page, or a page of a deleted lesson, cannot change (409).',
    ...manage,
    body: UpdateLessonPage,
    bodyExample: { title: 'Which gas do plants take in from the air?' },
    notFoundCode,
    item: LessonPage,
    name,
    successDescription: 'The page as it is now.',
    handler: (ctx, { params, body }) => ctx.services.lessonPages.update(ctx.db, ctx.organisation.id, { id: params.id }, body),
  }),
  deleteByIdOperation({
    id: 'deleteLessonPage',
    errorCodes: ['activity.deleted', 'lesson_page.deleted'],
    collection: 'lesson_pages',
    emits: [events.deleted],
    tag,
    summary: 'Delete a lesson page',
    description: 'Soft delete: the page keeps its row with `deleted_at` set and leaves lists unless `include_deleted=true`; its tombstone is in `/lesson_pages/deletions`.',
    scope: 'courses:delete',
    capability: manage.capability,
    notFoundCode,
    remove: (ctx, id) => ctx.services.lessonPages.remove(ctx.db, ctx.organisation.id, { id: id }),
  }),
  // spec: operation 9 — up to 500 lesson page operations; `op` is create, update, upsert or delete.
  bulkOperation({
    id: 'bulkLessonPages',
    collection: 'lesson_pages',
    tag,
    summary: 'Apply up to 500 lesson page operations',
    ...manage,
    item: LessonPage,
    emits: [events.created, events.updated, events.deleted],
    operations: { create: { data: CreateLessonPage }, update: { data: UpdateLessonPage }, upsert: { data: UpsertLessonPage }, delete: {} },
    example: { ref: 'page-1', op: 'create', data: example },
    executors(ctx) {
      const { db, services } = ctx;
      const org = ctx.organisation.id;
      // One set of lookups for the whole request: the lesson is checked and its last sort key read once.
      const lookups = lessonPageLookups();
      return {
        create: (data, externalId) => services.lessonPages.create(db, org, externalId === undefined ? data : { ...data, external_id: externalId }, lookups),
        update: (target, data) => services.lessonPages.update(db, org, target, data, lookups),
        upsert: (externalId, data) => services.lessonPages.upsertByExternalId(db, org, externalId, data, lookups),
        delete: (target) => services.lessonPages.remove(db, org, target, lookups),
      };
    },
  }),
];
