// What a lesson-page operation reads and writes, two ways with the same rules (lesson-pages.service.ts decides):
// at once (a single request, or a bulk request's operations run one by one), or from what a bulk request read up
// front, its writes queued in a batch (domain/bulk/batch-writes.ts) and written with the other operations' in a
// few statements, so that its round trips do not grow with its operations. A page's place in its lesson is read
// from the keys of every page of the lessons the request touches, kept current as its operations write. The
// database's unique index stays the guard against an external id another request took meanwhile: the batch's
// INSERT then fails, and the engine runs the operations one by one.
import type { Db } from '../../db/database.ts';
import type { FailureTranslation } from '../../db/deferred-writes.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventData, EventRecorder } from '../../events/outbox.ts';
import { BatchWrites } from '../bulk/batch-writes.ts';
import type { BulkItem } from '../bulk/bulk-engine.ts';
import { isUuid } from '../../operations/schemas.ts';
import { activitiesRepository } from '../activities/activities.repository.ts';
import { tombstoneRow } from '../deletions/deletions.repository.ts';
import { softDelete } from '../deletions/soft-delete.ts';
import { extensionFor } from '../extensions/extensions.catalog.ts';
import { extensionsRepository } from '../extensions/extensions.repository.ts';
import { externalIdTaken } from '../external-ids.ts';
import { isQuestionType } from './page-types.ts';
import { lessonPagesRepository, type CreationFacts, type LessonPageKey, type LessonPageRef, type LessonPageRow, type NamedLesson } from './lesson-pages.repository.ts';
import type { MaybeAsync } from '../../maybe-async.ts';

/** The activity a lesson page names as its lesson, as far as the rules look at it. */
export type LessonActivity = { type: string; course_id: string; deleted_at: string | null };

export interface LessonPageStore {
  /** The page `ref` names, and whether its lesson is live. */
  find(ref: LessonPageRef): Promise<(LessonPageRow & { lesson_live: boolean | number }) | undefined>;
  byExternalId(externalId: string): Promise<LessonPageRow | undefined>;
  /** The page `id` (deleted or not) when it is one of lesson `lessonId`'s. */
  pageOfLesson(lessonId: string, id: string): Promise<Pick<LessonPageRow, 'sort_key' | 'deleted_at'> | undefined>;
  activity(id: string): Promise<LessonActivity | undefined>;
  extensionDisabled(extension: string): Promise<boolean>;
  /** What a new page's checks need, at once (lessonPagesRepository.creationFacts). */
  creationFacts(q: { lessonId?: string; extension?: string; lastKeyOf?: string }): Promise<CreationFacts>;
  /** The smallest sort key of the lesson after `after` (null: the first key), other than `exceptId`'s. */
  sortKeyAfter(lessonId: string, after: string | null, exceptId: string | undefined): Promise<string | null>;
  /** The id of the live page right before `row` in its lesson, or undefined when it is the first. */
  previousLive(row: Pick<LessonPageRow, 'lesson_id' | 'sort_key' | 'id'>): Promise<string | undefined>;
  /** Which of `ids` are live pages of the lesson. */
  livePagesOf(lessonId: string, ids: string[]): Promise<Set<string>>;
  /** A new page; an external id taken is `onClash`'s 409. */
  insert(row: LessonPageRow, onClash: FailureTranslation): Promise<void>;
  /** Sets columns of a live page. */
  update(row: LessonPageRow, set: Partial<LessonPageRow>): Promise<void>;
  /** Marks a live page deleted at `at` and records its tombstone. */
  softDelete(row: LessonPageRow, at: string): Promise<void>;
  event(type: EventType, data: EventData): MaybeAsync<unknown>;
}

export function directLessonPageStore(db: Db, organisationId: string, events: EventRecorder): LessonPageStore {
  return {
    find: (ref) => lessonPagesRepository.find(db, organisationId, ref),
    byExternalId: (externalId) => lessonPagesRepository.findByExternalId(db, organisationId, externalId),
    async pageOfLesson(lessonId, id) {
      const row = await lessonPagesRepository.findById(db, organisationId, id);
      return row?.lesson_id === lessonId ? row : undefined;
    },
    activity: async (id) => activitiesRepository.findById(db, organisationId, id),
    extensionDisabled: (extension) => extensionsRepository.isDisabled(db, organisationId, extension),
    creationFacts: (q) => lessonPagesRepository.creationFacts(db, organisationId, q),
    sortKeyAfter: (lessonId, after, exceptId) => lessonPagesRepository.sortKeyAfter(db, organisationId, lessonId, after, exceptId),
    previousLive: async (row) => (await lessonPagesRepository.previousLive(db, organisationId, row))?.id,
    livePagesOf: (lessonId, ids) => lessonPagesRepository.livePagesOf(db, organisationId, lessonId, ids),
    insert: (row, onClash) => lessonPagesRepository.insert(db, row, onClash),
    update: (row, set) => lessonPagesRepository.update(db, organisationId, row.id, set),
    softDelete: (row, at) => softDelete(db, organisationId, 'lesson_page', row, at, (patch) => lessonPagesRepository.update(db, organisationId, row.id, patch)),
    event: (type, data) => events.record(db, organisationId, type, data),
  };
}

/**
 * What a bulk request's operations name, read from the body before each is validated: the pages by id (an
 * update's or delete's, a place's `after_page_id`), by external id, the lessons of creates and upserts, the
 * question types' extensions. Strings that are no UUID name nothing (their operation fails its validation).
 */
export interface NamedInLessonPagesBulk {
  pageIds: Set<string>;
  externalIds: Set<string>;
  lessonIds: Set<string>;
  extensions: Set<string>;
}

export function namedInLessonPagesBulk(items: readonly BulkItem[]): NamedInLessonPagesBulk {
  const named: NamedInLessonPagesBulk = { pageIds: new Set(), externalIds: new Set(), lessonIds: new Set(), extensions: new Set() };
  const uuid = (value: unknown): value is string => typeof value === 'string' && isUuid(value);
  for (const item of items) {
    const data = item.data ?? {};
    if (uuid(item.id)) named.pageIds.add(item.id);
    if (uuid(data.after_page_id)) named.pageIds.add(data.after_page_id);
    if (typeof item.external_id === 'string') named.externalIds.add(item.external_id);
    if (typeof data.external_id === 'string') named.externalIds.add(data.external_id);
    if ((item.op === 'create' || item.op === 'upsert') && uuid(data.lesson_id)) named.lessonIds.add(data.lesson_id);
    const extension = typeof data.page_type === 'string' && isQuestionType(data.page_type) ? extensionFor('question_type', data.page_type) : undefined;
    if (extension !== undefined) named.extensions.add(extension);
  }
  return named;
}

/** The page's own columns of a namedInBulk row. */
const pageRow = (row: LessonPageRow): LessonPageRow => ({
  id: row.id,
  organisation_id: row.organisation_id,
  external_id: row.external_id,
  created_at: row.created_at,
  updated_at: row.updated_at,
  deleted_at: row.deleted_at,
  lesson_id: row.lesson_id,
  course_id: row.course_id,
  title: row.title,
  page_type: row.page_type,
  contents: row.contents,
  answers: row.answers,
  sort_key: row.sort_key,
});

/** By byte order of their sort keys, then ids: the order of a lesson's pages (lessonPagesRepository.page). */
const inLessonOrder = (a: LessonPageKey, b: LessonPageKey) => (a.sort_key < b.sort_key ? -1 : a.sort_key > b.sort_key ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/**
 * A bulk request's store, read in one round trip: the pages `named` names (whole rows), the activities they and
 * the creates name, the keys of every page of those lessons (deleted ones included: keys are never reused) and
 * the question types' switches. Its writes are queued in `writes` and kept in memory, so that a later operation
 * reads what an earlier one wrote; a read outside what was read up front (none of the ordinary shapes makes one)
 * goes to the database, where nothing of this batch can be.
 */
export async function batchedLessonPageStore(db: Db, organisationId: string, events: EventRecorder, named: NamedInLessonPagesBulk): Promise<{ store: LessonPageStore; writes: BatchWrites; lessons: NamedLesson[] }> {
  const direct = directLessonPageStore(db, organisationId, events);
  const extensions = [...named.extensions];
  const rows = await lessonPagesRepository.namedInBulk(db, organisationId, { ...named, extensions });
  const disabled = new Map(extensions.map((extension, i) => [extension, Boolean(rows[0][`disabled_${i}`])]));
  const activities = new Map<string, LessonActivity>();
  const pages = new Map<string, LessonPageRow>();
  const idOfExternal = new Map<string, string>();
  const remember = (row: LessonPageRow) => {
    pages.set(row.id, row);
    if (row.external_id !== null) idOfExternal.set(row.external_id, row.id);
  };
  // Every page of each lesson read (none for a lesson named that is not there), in lesson order, as the
  // lesson's reads see them.
  const lessonKeys = new Map<string, LessonPageKey[]>();
  for (const id of named.lessonIds) lessonKeys.set(id, []);
  for (const row of rows) {
    if (row.a_id === null) continue;
    activities.set(row.a_id, { type: row.a_type!, course_id: row.a_course_id!, deleted_at: row.a_deleted_at });
    const keys = lessonKeys.get(row.a_id) ?? [];
    lessonKeys.set(row.a_id, keys);
    if (row.id === null) continue;
    const page = row as LessonPageRow;
    keys.push({ id: page.id, lesson_id: page.lesson_id, sort_key: page.sort_key, deleted_at: page.deleted_at });
    if (named.pageIds.has(page.id) || (page.external_id !== null && named.externalIds.has(page.external_id))) {
      remember(pageRow(page));
    }
  }
  for (const keys of lessonKeys.values()) keys.sort(inLessonOrder);
  const keysOf = (lessonId: string) => lessonKeys.get(lessonId);
  const place = (row: LessonPageRow) => {
    const keys = keysOf(row.lesson_id)!;
    const at = keys.findIndex((k) => k.id === row.id);
    if (at >= 0) keys.splice(at, 1);
    keys.push({ id: row.id, lesson_id: row.lesson_id, sort_key: row.sort_key, deleted_at: row.deleted_at });
    keys.sort(inLessonOrder);
  };
  const lessonLive = (lessonId: string) => activities.get(lessonId)?.deleted_at === null;
  const knownActivity = (id: string) => named.lessonIds.has(id) || activities.has(id);
  const byExternalId = (externalId: string) => pages.get(idOfExternal.get(externalId) ?? '');
  const writes = new BatchWrites(events);
  const change = (row: LessonPageRow, set: Partial<LessonPageRow>) => {
    writes.update('lesson_pages', organisationId, row.id, set);
    const changed = { ...row, ...set };
    remember(changed);
    place(changed);
  };
  const store: LessonPageStore = {
    async find(ref) {
      const known = 'id' in ref ? named.pageIds.has(ref.id) || pages.has(ref.id) : named.externalIds.has(ref.external_id) || idOfExternal.has(ref.external_id);
      if (!known) return direct.find(ref);
      const row = 'id' in ref ? pages.get(ref.id) : byExternalId(ref.external_id);
      return row && { ...row, lesson_live: lessonLive(row.lesson_id) };
    },
    byExternalId: (externalId) => (named.externalIds.has(externalId) || idOfExternal.has(externalId) ? Promise.resolve(byExternalId(externalId)) : direct.byExternalId(externalId)),
    async pageOfLesson(lessonId, id) {
      const keys = keysOf(lessonId);
      return keys ? keys.find((k) => k.id === id) : direct.pageOfLesson(lessonId, id);
    },
    activity: (id) => (knownActivity(id) ? Promise.resolve(activities.get(id)) : direct.activity(id)),
    extensionDisabled: (extension) => (disabled.has(extension) ? Promise.resolve(disabled.get(extension)!) : direct.extensionDisabled(extension)),
    async creationFacts(q) {
      const known = (q.lessonId === undefined || knownActivity(q.lessonId)) && (q.extension === undefined || disabled.has(q.extension)) && (q.lastKeyOf === undefined || keysOf(q.lastKeyOf));
      if (!known) return direct.creationFacts(q);
      const lesson = q.lessonId === undefined ? undefined : activities.get(q.lessonId);
      const keys = q.lastKeyOf === undefined ? undefined : keysOf(q.lastKeyOf)!;
      return {
        lesson_type: lesson?.type ?? null,
        lesson_course_id: lesson?.course_id ?? null,
        lesson_deleted_at: lesson?.deleted_at ?? null,
        extension_disabled: q.extension === undefined ? null : disabled.get(q.extension)!,
        last_sort_key: keys && keys.length > 0 ? keys[keys.length - 1].sort_key : null,
      };
    },
    async sortKeyAfter(lessonId, after, exceptId) {
      const keys = keysOf(lessonId);
      if (!keys) return direct.sortKeyAfter(lessonId, after, exceptId);
      return keys.find((k) => (after === null || k.sort_key > after) && k.id !== exceptId)?.sort_key ?? null;
    },
    async previousLive(row) {
      const keys = keysOf(row.lesson_id);
      if (!keys) return direct.previousLive(row);
      const before = keys.filter((k) => k.deleted_at === null && inLessonOrder(k, row as LessonPageKey) < 0);
      return before.at(-1)?.id;
    },
    async livePagesOf(lessonId, ids) {
      const keys = keysOf(lessonId);
      if (!keys) return direct.livePagesOf(lessonId, ids);
      const wanted = new Set(ids);
      return new Set(keys.filter((k) => k.deleted_at === null && wanted.has(k.id)).map((k) => k.id));
    },
    async insert(row) {
      // The database would refuse it only at the batch's end: the key the batch knows is checked here.
      if (row.external_id !== null && (await store.byExternalId(row.external_id))) throw externalIdTaken('lesson page', row.external_id);
      writes.insert('lesson_pages', row);
      remember(row);
      place(row);
    },
    async update(row, set) {
      change(row, set);
    },
    async softDelete(row, at) {
      change(row, { deleted_at: at, updated_at: at });
      writes.insert('deletions', tombstoneRow(organisationId, 'lesson_page', row, at));
    },
    async event(type, data) {
      writes.event(organisationId, type, data);
    },
  };
  // What lessonsWithLastKeys answers for the lessons the creates and upserts name: the lookups the one-by-one run starts with.
  const lessons = [...named.lessonIds].flatMap((id) => {
    const activity = activities.get(id);
    const keys = lessonKeys.get(id)!;
    return activity ? [{ id, ...activity, last_sort_key: keys.length > 0 ? keys[keys.length - 1].sort_key : null }] : [];
  });
  return { store, writes, lessons };
}
