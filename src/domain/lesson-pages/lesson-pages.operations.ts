import Type from 'typebox';
import { ListQuery } from '../../operations/pagination.ts';
import { createOperation, deleteByIdOperation, listOperation, readByIdOperation, syncOperations, updateOperation, type Resource } from '../../operations/resource-operations.ts';
import { Uuid } from '../../operations/schemas.ts';
import type { Static } from 'typebox';
import type { BulkExecutors, BulkRequestBody, BulkTarget } from '../bulk/bulk-engine.ts';
import { bulkOperation, type BulkOperationSpec } from '../bulk/bulk.operation.ts';
import type { OperationContext } from '../../operations/operation.ts';
import { CreateLessonPage, LessonPage, UpdateLessonPage, UpsertLessonPage } from './lesson-pages.schemas.ts';
import { prefetchedLessonPageLookups, type LessonPageLookups } from './lesson-pages.service.ts';
import { namedInLessonPagesBulk, type LessonPageStore } from './lesson-pages.store.ts';

const lessonPage: Resource = { collection: 'lesson_pages', resourceType: 'lesson_page', name: { singular: 'lesson page', plural: 'lesson pages' }, tag: 'Lesson pages', item: LessonPage, notFoundCode: 'lesson_page.not_found' };
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

type LessonPageBulkOps = { create: { data: typeof CreateLessonPage }; update: { data: typeof UpdateLessonPage }; upsert: { data: typeof UpsertLessonPage }; delete: Record<string, never> };

// spec: operation 9 — up to 500 lesson page operations; `op` is create, update, upsert or delete. Its declaration
// is exported so that a test can run the same requests without the batch (lesson-pages.bulk-batch.test.ts).
export const lessonPagesBulk = {
  id: 'bulkLessonPages',
  collection: lessonPage.collection,
  tag: lessonPage.tag,
  summary: 'Apply up to 500 lesson page operations',
  ...manage,
  item: LessonPage,
  emits: [events.created, events.updated, events.deleted],
  operations: { create: { data: CreateLessonPage }, update: { data: UpdateLessonPage }, upsert: { data: UpsertLessonPage }, delete: {} },
  example: { ref: 'page-1', op: 'create', data: example },
  executors(ctx: OperationContext, body: BulkRequestBody): BulkExecutors<LessonPageBulkOps> {
    const { db, services } = ctx;
    const svc = services.lessonPages;
    const org = ctx.organisation.id;
    // The same service functions, reading and writing at once, or through a batch's store (lesson-pages.store.ts).
    const bind = (lookups: () => Promise<LessonPageLookups>, store?: LessonPageStore) => ({
      create: async (data: Static<typeof CreateLessonPage>, externalId: string | undefined) =>
        svc.create(db, org, externalId === undefined ? data : { ...data, external_id: externalId }, await lookups(), store),
      update: async (target: BulkTarget, data: Static<typeof UpdateLessonPage>) => svc.update(db, org, target, data, await lookups(), store),
      upsert: async (externalId: string, data: Static<typeof UpsertLessonPage>) => svc.upsertByExternalId(db, org, externalId, data, await lookups(), store),
      delete: async (target: BulkTarget) => svc.remove(db, org, target, await lookups(), store),
    });
    // One by one (only when a batch could not be written): the lessons its creates and upserts name are checked,
    // and their last sort keys read, in one query when the first operation runs.
    let prefetched: Promise<LessonPageLookups> | undefined;
    return {
      // The lessons named as the batch reads them (namedInLessonPagesBulk), so that both start from the same lookups.
      ...bind(() => (prefetched ??= prefetchedLessonPageLookups(db, org, namedInLessonPagesBulk(body.operations).lessonIds))),
      batch: async () => {
        const { store, writes, lookups } = await svc.batch(db, org, namedInLessonPagesBulk(body.operations));
        return { executors: bind(async () => lookups, store), writes };
      },
    };
  },
} satisfies BulkOperationSpec<LessonPageBulkOps>;

export const lessonPageOperations = [
  ...syncOperations({
    ...lessonPage,
    upsertErrorCodes: ['activity.deleted', 'lesson_page.deleted', 'resource.external_id_taken'],
    read,
    write: manage,
    upsertBody: UpsertLessonPage,
    upsertExample: example,
    service: (ctx) => ctx.services.lessonPages,
  }),
  listOperation({
    ...lessonPage,
    id: 'listLessonPages',
    summary: 'List lesson pages',
    description: 'Pages in lesson order (by lesson, then `sort_key`), optionally of one lesson; with `updated_since`, in order of change.',
    ...read,
    query: Type.Object({ ...ListQuery, lesson_id: Type.Optional(Uuid({ description: 'Only pages of this lesson activity.' })) }, { additionalProperties: false }),
    handler: (ctx, { query }) => ctx.services.lessonPages.list(ctx.db, ctx.organisation.id, query),
  }),
  readByIdOperation({
    ...lessonPage,
    id: 'getLessonPage',
    summary: 'Read a lesson page',
    description: 'A deleted page is still readable, with `deleted_at` set.',
    ...read,
    read: (ctx, id) => ctx.services.lessonPages.get(ctx.db, ctx.organisation.id, id),
  }),
  createOperation({
    ...lessonPage,
    id: 'createLessonPage',
    errorCodes: ['activity.deleted', 'extension.disabled', 'resource.external_id_taken'],
    emits: [events.created],
    summary: 'Create a lesson page',
    description:
      'Adds a page to a lesson activity: at the end, or right after `after_page_id` (null: first). Its answers must suit its `page_type` (422 at `/answers`). A deleted lesson takes no new pages (409 `activity.deleted`).',
    ...manage,
    body: CreateLessonPage,
    bodyExample: example,
    successDescription: 'The new page.',
    handler: (ctx, { body }) => ctx.services.lessonPages.create(ctx.db, ctx.organisation.id, body),
  }),
  updateOperation({
    ...lessonPage,
    id: 'updateLessonPage',
    errorCodes: ['activity.deleted', 'extension.disabled', 'lesson_page.deleted'],
    emits: [events.updated],
    summary: 'Change or move a lesson page',
    description:
      'Partial update: fields absent from the body are left as they are; `answers` replaces the whole list; `after_page_id` moves the page (null: first). A deleted page, or a page of a deleted lesson, cannot change (409).',
    ...manage,
    body: UpdateLessonPage,
    bodyExample: { title: 'Which gas do plants take in from the air?' },
    successDescription: 'The page as it is now.',
    handler: (ctx, { params, body }) => ctx.services.lessonPages.update(ctx.db, ctx.organisation.id, { id: params.id }, body),
  }),
  deleteByIdOperation({
    ...lessonPage,
    id: 'deleteLessonPage',
    errorCodes: ['activity.deleted', 'lesson_page.deleted'],
    emits: [events.deleted],
    summary: 'Delete a lesson page',
    description: 'Soft delete: the page keeps its row with `deleted_at` set and leaves lists unless `include_deleted=true`; its tombstone is in `/lesson_pages/deletions`.',
    scope: 'courses:delete',
    capability: manage.capability,
    remove: (ctx, id) => ctx.services.lessonPages.remove(ctx.db, ctx.organisation.id, { id: id }),
  }),
  bulkOperation(lessonPagesBulk),
];
