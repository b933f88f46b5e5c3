// Pages of a lesson activity: create (appended at the end, or after a given page), read, list in lesson
// order, partial update (including moving), soft delete, and upsert by external id. The bulk endpoint
// (spec operation 9) runs these same functions, sharing one `LessonPageLookups` across its operations; they read
// and write through a `LessonPageStore` (lesson-pages.store.ts): the database at once, or a bulk batch's memory.
import { generateKeyBetween } from 'fractional-indexing';
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { insertWithExternalId } from '../external-ids.ts';
import { newResourceRow } from '../resource-rows.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, fieldError, type FieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import type { ExtensionService } from '../extensions/extensions.service.ts';
import { activityDeleted, refuseUnlessActivityOfType } from '../activities/activities.service.ts';
import { extensionFor } from '../extensions/extensions.catalog.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import { quotedForSummary } from '../../events/summary-text.ts';
import { resourceList, type ListParams } from '../../operations/listing.ts';
import type { CreateLessonPage, LessonPage, UpdateLessonPage, UpsertLessonPage } from './lesson-pages.schemas.ts';
import { lessonPagesRepository, type LessonPageRef, type LessonPageRow, type NamedLesson } from './lesson-pages.repository.ts';
import { batchedLessonPageStore, directLessonPageStore, type LessonPageStore, type NamedInLessonPagesBulk } from './lesson-pages.store.ts';
import { answerErrors, isJumpKeyword, isQuestionType, type AnswerValue, type PageTypeName } from './page-types.ts';
import { andThen, type MaybeAsync } from '../../maybe-async.ts';

type LessonPageView = Static<typeof LessonPage>;
type AnswerInput = NonNullable<Static<typeof CreateLessonPage>['answers']>[number];
type ContentsInput = Static<typeof CreateLessonPage>['contents'];

/**
 * What one request may read once and reuse across its operations: a bulk request of 500 creates in one lesson
 * checks the lesson once and reads its last sort key once. Only facts no lesson-page write can change are
 * kept (a lesson is live; its course), plus the last sort key, which the writes here keep up to date.
 */
export interface LessonPageLookups {
  /** Live lessons seen so far: id → course id. */
  lessons: Map<string, string>;
  /** Greatest sort key per lesson, once read. */
  lastKeys: Map<string, string | null>;
  /** Question types found switched on (spec: What the service does 7). */
  questionTypesOn: Set<string>;
}

export const lessonPageLookups = (): LessonPageLookups => ({ lessons: new Map(), lastKeys: new Map(), questionTypesOn: new Set() });

/**
 * Lookups holding, for a bulk request, the lessons its operations name that are live lessons, with their last
 * sort keys, read in one query up front rather than one lesson at a time as its operations run: what the first
 * operation naming each would have read and kept. Any other lesson is read, and refused, by the operation.
 */
export async function prefetchedLessonPageLookups(db: Db, organisationId: string, lessonIds: ReadonlySet<string>): Promise<LessonPageLookups> {
  return lookupsOf(await lessonPagesRepository.lessonsWithLastKeys(db, organisationId, [...lessonIds]));
}

/** The lookups of `lessons`, as read for a bulk request by lessonsWithLastKeys (or from its batch's reads). */
function lookupsOf(lessons: readonly NamedLesson[]): LessonPageLookups {
  const lookups = lessonPageLookups();
  for (const lesson of lessons) {
    if (lesson.type !== 'lesson' || lesson.deleted_at !== null) continue;
    lookups.lessons.set(lesson.id, lesson.course_id);
    lookups.lastKeys.set(lesson.id, lesson.last_sort_key ?? null);
  }
  return lookups;
}

export function toLessonPageView(row: LessonPageRow): LessonPageView {
  return {
    id: row.id,
    external_id: row.external_id,
    lesson_id: row.lesson_id,
    course_id: row.course_id,
    title: row.title,
    page_type: row.page_type,
    contents: row.contents === null ? null : JSON.parse(row.contents),
    answers: JSON.parse(row.answers),
    sort_key: row.sort_key,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

// Quoted as the statements that make an event in SQL quote it (one-statement PATCH and DELETE).

// Stored in one key order, so that equal values are equal JSON text and "nothing changed" is a text compare.
const answersJson = (answers: AnswerInput[]): string =>
  JSON.stringify(answers.map((a): AnswerValue => ({ text: a.text, response: a.response ?? null, score: a.score ?? 0, jump_to: a.jump_to ?? 'next_page' })));
const contentsJson = (contents: ContentsInput): string | null => (contents ? JSON.stringify({ format: contents.format, content: contents.content }) : null);

export function createLessonPageService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder; extensions: ExtensionService }) {
  const { clock, cursors, events, extensions } = deps;

  /** A page becomes a question of a type only while that question type is switched on; existing pages keep working. */
  async function requireQuestionType(db: Db, organisationId: string, pageType: PageTypeName, lookups: LessonPageLookups, store: LessonPageStore, disabled?: boolean): Promise<void> {
    if (!isQuestionType(pageType) || lookups.questionTypesOn.has(pageType)) return;
    const extension = extensionFor('question_type', pageType);
    await extensions.requireEnabled(db, organisationId, 'question_type', pageType, '/page_type', disabled ?? (extension !== undefined && (await store.extensionDisabled(extension))));
    lookups.questionTypesOn.add(pageType);
  }

  const record = (store: LessonPageStore, type: EventType, row: LessonPageRow, summary: string) => store.event(type, { id: row.id, lesson_id: row.lesson_id, course_id: row.course_id, summary });

  /** The live lesson activity a body names (422 at /lesson_id when it is none, 409 when deleted); its course id. */
  async function lessonFor(lessonId: string, lookups: LessonPageLookups, store: LessonPageStore): Promise<string> {
    const known = lookups.lessons.get(lessonId);
    if (known !== undefined) return known;
    const activity = refuseUnlessActivityOfType(await store.activity(lessonId), lessonId, 'lesson', '/lesson_id');
    lookups.lessons.set(lessonId, activity.course_id);
    return activity.course_id;
  }

  /** A page that may change: 404 when there is none, 409 when it or its lesson was deleted. */
  async function writable(ref: LessonPageRef, lookups: LessonPageLookups, store: LessonPageStore): Promise<LessonPageRow> {
    const found = await store.find(ref);
    if (!found) throw notFound(ref);
    const { lesson_live: lessonLive, ...row } = found;
    return checkWritable(row, lookups, store, Boolean(lessonLive));
  }

  /** `lessonLive`: whether the lesson was found live with the page (read here where not given). */
  async function checkWritable(row: LessonPageRow, lookups: LessonPageLookups, store: LessonPageStore, lessonLive?: boolean): Promise<LessonPageRow> {
    if (row.deleted_at !== null) throw new ApiError('lesson_page.deleted', `Lesson page ${row.id} was deleted at ${row.deleted_at}; it can no longer change.`);
    if (!lookups.lessons.has(row.lesson_id)) {
      if (!(lessonLive ?? (await store.activity(row.lesson_id))?.deleted_at === null)) throw activityDeleted(row.lesson_id);
      lookups.lessons.set(row.lesson_id, row.course_id);
    }
    return row;
  }

  const notFound = (ref: LessonPageRef) =>
    new ApiError('lesson_page.not_found', 'id' in ref ? `No lesson page ${ref.id} in this organisation.` : `No lesson page with external_id ${JSON.stringify(ref.external_id)} in this organisation.`);

  /** Answers must suit the page type, and a jump to a page must name a live page of the same lesson. */
  async function checkAnswers(store: LessonPageStore, lessonId: string, type: PageTypeName, json: string): Promise<void> {
    const answers = JSON.parse(json) as AnswerValue[];
    const errors: FieldError[] = answerErrors(type, answers);
    const pageIds = [...new Set(answers.map((a) => a.jump_to).filter((j) => !isJumpKeyword(j)))];
    if (pageIds.length > 0) {
      const live = await store.livePagesOf(lessonId, pageIds);
      answers.forEach((a, i) => {
        if (!isJumpKeyword(a.jump_to) && !live.has(a.jump_to)) {
          errors.push({ path: `/answers/${i}/jump_to`, code: 'not_found', detail: `No live page ${a.jump_to} in this lesson to jump to.` });
        }
      });
    }
    if (errors.length > 0) throw new ApiError('validation.invalid_body', errors.map((e) => e.detail).join(' '), { errors });
  }

  async function lastKey(lessonId: string, lookups: LessonPageLookups, store: LessonPageStore): Promise<string | null> {
    if (lookups.lastKeys.has(lessonId)) return lookups.lastKeys.get(lessonId)!;
    const key = (await store.creationFacts({ lastKeyOf: lessonId })).last_sort_key;
    lookups.lastKeys.set(lessonId, key);
    return key;
  }

  /**
   * The sort key for a page placed after `afterPageId` (null: first) in its lesson; `moving` is the page
   * itself when it already exists. Left out (undefined): at the end.
   */
  async function placement(lessonId: string, afterPageId: string | null | undefined, moving: LessonPageRow | undefined, lookups: LessonPageLookups, store: LessonPageStore): Promise<string> {
    let key: string;
    if (afterPageId === undefined) {
      key = generateKeyBetween(await lastKey(lessonId, lookups, store), null);
    } else if (afterPageId === null) {
      key = generateKeyBetween(null, await store.sortKeyAfter(lessonId, null, moving?.id));
    } else {
      if (afterPageId === moving?.id) throw fieldError('/after_page_id', 'invalid', 'A page cannot be placed after itself.');
      const anchor = await store.pageOfLesson(lessonId, afterPageId);
      if (!anchor || anchor.deleted_at !== null) {
        throw fieldError('/after_page_id', 'not_found', `No live page ${afterPageId} in this lesson.`);
      }
      key = generateKeyBetween(anchor.sort_key, await store.sortKeyAfter(lessonId, anchor.sort_key, moving?.id));
    }
    const last = lookups.lastKeys.get(lessonId);
    if (lookups.lastKeys.has(lessonId) && (last === null || key > last!)) lookups.lastKeys.set(lessonId, key);
    return key;
  }

  /**
   * What create would read one by one (its lesson, its question type's switch, the lesson's last sort key),
   * read at once where `lookups` does not hold it yet, and checked in the same order: one round trip rather than
   * three on PostgreSQL.
   */
  async function readCreationFacts(db: Db, organisationId: string, input: Static<typeof CreateLessonPage>, pageType: PageTypeName, lookups: LessonPageLookups, store: LessonPageStore): Promise<void> {
    const lessonId = input.lesson_id;
    const readLesson = !lookups.lessons.has(lessonId);
    const readSwitch = isQuestionType(pageType) && !lookups.questionTypesOn.has(pageType);
    const readLastKey = input.after_page_id === undefined && !lookups.lastKeys.has(lessonId);
    if (!readLesson && !readSwitch && !readLastKey) return;
    const facts = await store.creationFacts({
      lessonId: readLesson ? lessonId : undefined,
      extension: readSwitch ? extensionFor('question_type', pageType) : undefined,
      lastKeyOf: readLastKey ? lessonId : undefined,
    });
    if (readLesson) {
      const lesson = facts.lesson_type === null ? undefined : { type: facts.lesson_type, deleted_at: facts.lesson_deleted_at };
      refuseUnlessActivityOfType(lesson, lessonId, 'lesson', '/lesson_id');
      lookups.lessons.set(lessonId, facts.lesson_course_id!);
    }
    if (readSwitch) {
      await requireQuestionType(db, organisationId, pageType, lookups, store, Boolean(facts.extension_disabled));
    }
    if (readLastKey) lookups.lastKeys.set(lessonId, facts.last_sort_key);
  }

  /**
   * One round trip (PostgreSQL, db/final-statement.ts): a page appended at the end of its lesson, its sort key after
   * the lesson's last (made by the database, as generateKeyBetween makes it) and its event go with the COMMIT; one
   * not made (the lesson absent, of another type or deleted, the question type switched off, a jump to no live
   * page of the lesson, the external id taken) refuses it, so that the request runs again down its full path
   * (422, 409). Placed (`after_page_id`): its key between the page named, which must be a live page of the lesson,
   * and the next key (null: before the first), made by the database as generateKeyBetween(a, b) makes it. Undefined
   * where the request takes that path at once: answers unfit for the page type (a 422 that comes after the
   * lesson's and the switch's refusals).
   */
  async function createInOneStatement(db: Db, organisationId: string, input: Static<typeof CreateLessonPage>, pageType: PageTypeName): Promise<LessonPageView | undefined> {
    if (!finalStatementOffered()) return undefined;
    const answers = answersJson(input.answers ?? []);
    const parsed = JSON.parse(answers) as AnswerValue[];
    const extension = isQuestionType(pageType) ? extensionFor('question_type', pageType) : undefined;
    if (answerErrors(pageType, parsed).length > 0 || (isQuestionType(pageType) && extension === undefined)) return undefined;
    const at = nowIso(clock);
    const row = {
      ...newResourceRow(organisationId, input.external_id, at),
      lesson_id: input.lesson_id,
      title: input.title,
      page_type: pageType,
      contents: contentsJson(input.contents),
      answers,
    };
    const jumpTargets = [...new Set(parsed.map((a) => a.jump_to).filter((j) => !isJumpKeyword(j)))];
    const made = await lessonPagesRepository.createInOneStatement(db, row, `Lesson page ${quotedForSummary(row.title)} added.`, { extension, jumpTargets, afterPageId: input.after_page_id });
    return toLessonPageView(made);
  }

  async function create(db: Db, organisationId: string, input: Static<typeof CreateLessonPage>, lookups = lessonPageLookups(), store = directLessonPageStore(db, organisationId, events)): Promise<LessonPageView> {
    const pageType = input.page_type ?? 'content';
    const finished = await createInOneStatement(db, organisationId, input, pageType);
    if (finished) return finished;
    await readCreationFacts(db, organisationId, input, pageType, lookups, store);
    const courseId = await lessonFor(input.lesson_id, lookups, store);
    await requireQuestionType(db, organisationId, pageType, lookups, store);
    const answers = answersJson(input.answers ?? []);
    await checkAnswers(store, input.lesson_id, pageType, answers);
    const at = nowIso(clock);
    const row: LessonPageRow = {
      ...newResourceRow(organisationId, input.external_id, at),
      lesson_id: input.lesson_id,
      course_id: courseId,
      title: input.title,
      page_type: pageType,
      contents: contentsJson(input.contents),
      answers,
      sort_key: await placement(input.lesson_id, input.after_page_id, undefined, lookups, store),
    };
    await insertWithExternalId((onClash) => store.insert(row, onClash), 'lesson page', input.external_id);
    await record(store, 'lesson_page.created', row, `Lesson page ${quotedForSummary(row.title)} added.`);
    return toLessonPageView(row);
  }

  /**
   * Partial update of a writable page. A change that changes nothing is not an update: no event, and
   * `updated_at` stays. Moving to where the page already is (right after the same live page) is no change.
   */
  async function updateRow(db: Db, organisationId: string, row: LessonPageRow, patch: Static<typeof UpdateLessonPage>, lookups: LessonPageLookups, store: LessonPageStore): Promise<LessonPageView> {
    const changes: Partial<Pick<LessonPageRow, 'title' | 'page_type' | 'contents' | 'answers' | 'sort_key' | 'updated_at'>> = {};
    if (patch.title !== undefined && patch.title !== row.title) changes.title = patch.title;
    if (patch.page_type !== undefined && patch.page_type !== row.page_type) changes.page_type = patch.page_type;
    if (patch.contents !== undefined && contentsJson(patch.contents) !== row.contents) changes.contents = contentsJson(patch.contents);
    if (patch.answers !== undefined && answersJson(patch.answers) !== row.answers) changes.answers = answersJson(patch.answers);
    if (changes.page_type !== undefined) await requireQuestionType(db, organisationId, changes.page_type as PageTypeName, lookups, store);
    if (changes.page_type !== undefined || changes.answers !== undefined) {
      await checkAnswers(store, row.lesson_id, (changes.page_type ?? row.page_type) as PageTypeName, changes.answers ?? row.answers);
    }
    if (patch.after_page_id !== undefined) {
      const previous = await store.previousLive(row);
      if ((previous ?? null) !== patch.after_page_id) changes.sort_key = await placement(row.lesson_id, patch.after_page_id, row, lookups, store);
    }
    const changed = Object.keys(changes);
    if (changed.length === 0) return toLessonPageView(row);
    changes.updated_at = nowIso(clock);
    await store.update(row, changes);
    const updated = { ...row, ...changes };
    const what = changed.map((c) => (c === 'sort_key' ? 'place in the lesson' : c.replace('_', ' ')));
    await record(store, 'lesson_page.updated', updated, `Lesson page ${quotedForSummary(updated.title)} changed: ${what.join(', ')}.`);
    return toLessonPageView(updated);
  }

  return {
    /**
     * A bulk request's batch (domain/bulk/batch-writes.ts): what its operations name, read in one round trip, the
     * store its operations then read and write through, and the lookups the one-by-one run would have started with.
     */
    async batch(db: Db, organisationId: string, named: NamedInLessonPagesBulk) {
      const { store, writes, lessons } = await batchedLessonPageStore(db, organisationId, events, named);
      return { store, writes, lookups: lookupsOf(lessons) };
    },

    get(db: Db, organisationId: string, id: string): MaybeAsync<LessonPageView> {
      return andThen(lessonPagesRepository.findById(db, organisationId, id), (row) => {
        if (!row) throw notFound({ id });
        return toLessonPageView(row);
      });
    },

    async getByExternalId(db: Db, organisationId: string, externalId: string): Promise<LessonPageView> {
      const row = await lessonPagesRepository.findByExternalId(db, organisationId, externalId);
      if (!row) throw notFound({ external_id: externalId });
      return toLessonPageView(row);
    },

    /** In lesson order (by lesson, then place in it); with `updated_since`, in order of change. */
    list: resourceList(cursors, {
      list: 'lesson_pages',
      page: lessonPagesRepository.page,
      map: toLessonPageView,
      filters: (params: ListParams & { lesson_id?: string }) => ({ lesson_id: params.lesson_id }),
      position: (row, params) => (params.updated_since === undefined ? [row.lesson_id, row.sort_key, row.id] : [row.updated_at, row.id]),
    }),

    create,

    async update(db: Db, organisationId: string, ref: LessonPageRef, patch: Static<typeof UpdateLessonPage>, lookups = lessonPageLookups(), store = directLessonPageStore(db, organisationId, events)): Promise<LessonPageView> {
      // One round trip (PostgreSQL, db/final-statement.ts) for a new title or contents, which no rule checks
      // against the database but the page's and its lesson's being live: the change and its event go with the
      // COMMIT, and a page not changed (absent, deleted, its lesson deleted, already so) refuses it, so that the
      // request runs again down here. A change of type, answers or place reads the page first.
      const simple = patch.page_type === undefined && patch.answers === undefined && patch.after_page_id === undefined;
      if ('id' in ref && simple && (patch.title !== undefined || patch.contents !== undefined) && finalStatementOffered()) {
        const changes = { title: patch.title, contents: patch.contents === undefined ? undefined : contentsJson(patch.contents) };
        return toLessonPageView(await lessonPagesRepository.updateInOneStatement(db, organisationId, ref.id, changes, nowIso(clock)));
      }
      return updateRow(db, organisationId, await writable(ref, lookups, store), patch, lookups, store);
    },

    /** A page's lesson is fixed: an upsert naming another lesson is a 422 at /lesson_id. Fields left out keep their value. */
    async upsertByExternalId(db: Db, organisationId: string, externalId: string, input: Static<typeof UpsertLessonPage>, lookups = lessonPageLookups(), store = directLessonPageStore(db, organisationId, events)) {
      const existing = await store.byExternalId(externalId);
      if (!existing) return { created: true, view: await create(db, organisationId, { ...input, external_id: externalId }, lookups, store) };
      if (existing.lesson_id !== input.lesson_id) throw fieldError('/lesson_id', 'immutable', 'A lesson page cannot move to another lesson.');
      const { lesson_id: _lesson, ...patch } = input;
      return { created: false, view: await updateRow(db, organisationId, await checkWritable(existing, lookups, store), patch, lookups, store) };
    },

    async remove(db: Db, organisationId: string, ref: LessonPageRef, lookups = lessonPageLookups(), store = directLessonPageStore(db, organisationId, events)): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete, its tombstone and its event go with the
      // COMMIT, and a page not live or in a deleted lesson refuses it, so that the request runs again down here.
      if ('id' in ref && finalStatementOffered()) return lessonPagesRepository.softDeleteInOneStatement(db, organisationId, ref.id, nowIso(clock));
      const row = await writable(ref, lookups, store);
      await store.softDelete(row, nowIso(clock));
      await record(store, 'lesson_page.deleted', row, `Lesson page ${quotedForSummary(row.title)} deleted.`);
    },
  };
}

export type LessonPageService = ReturnType<typeof createLessonPageService>;
