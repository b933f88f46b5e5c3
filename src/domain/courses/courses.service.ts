// Courses and their categories: the structure that sections (and later template scopes) hang from.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { insertWithExternalId } from '../external-ids.ts';
import { foundOr404, newResourceRow } from '../resource-rows.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import { softDelete } from '../deletions/soft-delete.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { resourceList, type ListParams } from '../../operations/listing.ts';
import type { Category, Course, CreateCategory, CreateCourse, UpdateCategory, UpdateCourse } from './courses.schemas.ts';
import { categoriesRepository, coursesRepository, deleteCategoryInOneStatement, deleteCourseAtOnce, deleteCourseInOneStatement, updateCategoryInOneStatement, updateCourseInOneStatement, type CategoryRow, type CourseRow } from './courses.repository.ts';
import type { EnrolmentService } from '../enrolments/enrolments.service.ts';
import { andThen } from '../../maybe-async.ts';

type CourseView = Static<typeof Course>;
type CategoryView = Static<typeof Category>;

export const toCourseView = (r: CourseRow): CourseView => ({
  id: r.id,
  external_id: r.external_id,
  category_id: r.category_id,
  fullname: r.fullname,
  shortname: r.shortname,
  visible: Boolean(r.visible),
  created_at: r.created_at,
  updated_at: r.updated_at,
  deleted_at: r.deleted_at,
});

export const toCategoryView = (r: CategoryRow): CategoryView => ({
  id: r.id,
  external_id: r.external_id,
  parent_id: r.parent_id,
  name: r.name,
  created_at: r.created_at,
  updated_at: r.updated_at,
  deleted_at: r.deleted_at,
});

/** The fields of `patch` that differ from `row` (booleans compared as booleans: SQLite stores 0/1). */
function changedFields<R extends Record<string, unknown>>(row: R, patch: Record<string, unknown>): Partial<R> {
  const changes: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    const current = typeof value === 'boolean' ? Boolean(row[key]) : row[key];
    if (value !== current) changes[key] = value;
  }
  return changes as Partial<R>;
}

/** Whether a patch asks for anything at all (one that asks nothing reads the row and answers it). */
const asksAnything = (patch: Record<string, unknown>) => Object.values(patch).some((v) => v !== undefined);

export function createCourseService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder; enrolments: Pick<EnrolmentService, 'endEnrolmentsOfCourse'> }) {
  const { clock, cursors, events, enrolments } = deps;

  async function liveCategoryRef(db: Db, organisationId: string, id: string, pointer: string): Promise<void> {
    const category = await categoriesRepository.findById(db, organisationId, id);
    if (!category || category.deleted_at !== null) throw fieldError(pointer, 'not_found', `No category ${id} in this organisation.`);
  }

  async function liveCourse(db: Db, organisationId: string, id: string): Promise<CourseRow> {
    const row = await foundOr404(coursesRepository.findById(db, organisationId, id), 'course.not_found', `No course ${id} in this organisation.`);
    if (row.deleted_at !== null) throw new ApiError('course.deleted', `Course ${id} was deleted at ${row.deleted_at}.`);
    return row;
  }

  async function liveCategory(db: Db, organisationId: string, id: string): Promise<CategoryRow> {
    const row = await foundOr404(categoriesRepository.findById(db, organisationId, id), 'category.not_found', `No category ${id} in this organisation.`);
    if (row.deleted_at !== null) throw new ApiError('category.deleted', `Category ${id} was deleted at ${row.deleted_at}.`);
    return row;
  }

  async function createCourse(db: Db, organisationId: string, input: Static<typeof CreateCourse>): Promise<CourseView> {
    if (input.category_id) await liveCategoryRef(db, organisationId, input.category_id, '/category_id');
    const at = nowIso(clock);
    const row: CourseRow = {
      ...newResourceRow(organisationId, input.external_id, at),
      category_id: input.category_id ?? null,
      fullname: input.fullname,
      shortname: input.shortname,
      visible: input.visible ?? true,
    };
    await insertWithExternalId((onClash) => coursesRepository.insert(db, row, onClash), 'course', input.external_id);
    await events.record(db, organisationId, 'course.created', { id: row.id, summary: `Course ${JSON.stringify(row.shortname)} created.` });
    return toCourseView(row);
  }

  async function updateCourse(db: Db, organisationId: string, id: string, patch: Static<typeof UpdateCourse>): Promise<CourseView> {
    // One round trip (PostgreSQL, db/final-statement.ts): the change and its event go with the COMMIT, and a
    // course not changed (absent, deleted, already so, its new category not live) refuses it, so that the request
    // runs again down here (404, 409, 422, or the course as it is).
    if (finalStatementOffered() && asksAnything(patch)) return toCourseView(await updateCourseInOneStatement(db, organisationId, id, patch, nowIso(clock)));
    const row = await liveCourse(db, organisationId, id);
    if (patch.category_id) await liveCategoryRef(db, organisationId, patch.category_id, '/category_id');
    const changes = changedFields(row, patch);
    if (Object.keys(changes).length === 0) return toCourseView(row);
    changes.updated_at = nowIso(clock);
    await coursesRepository.update(db, organisationId, id, changes);
    await events.record(db, organisationId, 'course.updated', { id, summary: `Course ${JSON.stringify(row.shortname)} changed: ${Object.keys(changes).filter((k) => k !== 'updated_at').join(', ')}.` });
    return toCourseView({ ...row, ...changes });
  }

  async function createCategory(db: Db, organisationId: string, input: Static<typeof CreateCategory>): Promise<CategoryView> {
    if (input.parent_id) await liveCategoryRef(db, organisationId, input.parent_id, '/parent_id');
    const at = nowIso(clock);
    const row: CategoryRow = {
      ...newResourceRow(organisationId, input.external_id, at),
      parent_id: input.parent_id ?? null,
      name: input.name,
    };
    await insertWithExternalId((onClash) => categoriesRepository.insert(db, row, onClash), 'category', input.external_id);
    await events.record(db, organisationId, 'category.created', { id: row.id, summary: `Category ${JSON.stringify(row.name)} created.` });
    return toCategoryView(row);
  }

  async function updateCategory(db: Db, organisationId: string, id: string, patch: Static<typeof UpdateCategory>): Promise<CategoryView> {
    // One round trip where it can, as updateCourse; a category named its own parent takes the full path.
    if (finalStatementOffered() && asksAnything(patch) && patch.parent_id !== id) {
      return toCategoryView(await updateCategoryInOneStatement(db, organisationId, id, patch, nowIso(clock)));
    }
    const row = await liveCategory(db, organisationId, id);
    if (patch.parent_id) {
      if (patch.parent_id === id) throw fieldError('/parent_id', 'invalid_value', 'A category cannot be its own parent.');
      await liveCategoryRef(db, organisationId, patch.parent_id, '/parent_id');
    }
    const changes = changedFields(row, patch);
    if (Object.keys(changes).length === 0) return toCategoryView(row);
    changes.updated_at = nowIso(clock);
    await categoriesRepository.update(db, organisationId, id, changes);
    await events.record(db, organisationId, 'category.updated', { id, summary: `Category ${JSON.stringify(row.name)} changed: ${Object.keys(changes).filter((k) => k !== 'updated_at').join(', ')}.` });
    return toCategoryView({ ...row, ...changes });
  }

  return {
    getCourse(db: Db, organisationId: string, id: string) {
      return andThen(foundOr404(coursesRepository.findById(db, organisationId, id), 'course.not_found', `No course ${id} in this organisation.`), toCourseView);
    },
    listCourses: resourceList(cursors, {
      list: 'courses',
      page: coursesRepository.page,
      map: toCourseView,
      filters: (params: ListParams & { category_id?: string }) => ({ category_id: params.category_id }),
    }),
    createCourse,
    updateCourse,
    async deleteCourse(db: Db, organisationId: string, id: string): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete, its enrolments' ends, the tombstones and
      // events go with the COMMIT; a course not live refuses it, so that the request runs again down here (404 or 409).
      if (finalStatementOffered()) return deleteCourseInOneStatement(db, organisationId, id, nowIso(clock));
      // With an Idempotency-Key, on PostgreSQL: the same statement, which says whether it deleted; if not, the
      // request goes on down here in its transaction (404 or 409).
      if (await deleteCourseAtOnce(db, organisationId, id, nowIso(clock))) return;
      const row = await liveCourse(db, organisationId, id);
      await softDelete(db, organisationId, 'course', row, nowIso(clock), (patch) => coursesRepository.update(db, organisationId, id, patch));
      // Its enrolments end with it, in this transaction, each with its own event (docs/api-guide.md#enrolments-and-roster-sync).
      const ended = await enrolments.endEnrolmentsOfCourse(db, organisationId, id);
      await events.record(db, organisationId, 'course.deleted', { id, summary: `Course ${JSON.stringify(row.shortname)} deleted${ended > 0 ? `; ${ended} enrolment(s) ended` : ''}.` });
    },
    async getCourseByExternalId(db: Db, organisationId: string, externalId: string) {
      return toCourseView(await foundOr404(coursesRepository.findByExternalId(db, organisationId, externalId), 'course.not_found', `No course with external_id ${JSON.stringify(externalId)}.`));
    },
    async upsertCourseByExternalId(db: Db, organisationId: string, externalId: string, input: Static<typeof CreateCourse>) {
      const existing = await coursesRepository.findByExternalId(db, organisationId, externalId);
      if (!existing) return { created: true, view: await createCourse(db, organisationId, { ...input, external_id: externalId }) };
      return { created: false, view: await updateCourse(db, organisationId, existing.id, input) };
    },

    getCategory(db: Db, organisationId: string, id: string) {
      return andThen(foundOr404(categoriesRepository.findById(db, organisationId, id), 'category.not_found', `No category ${id} in this organisation.`), toCategoryView);
    },
    listCategories: resourceList(cursors, { list: 'categories', page: categoriesRepository.page, map: toCategoryView }),
    createCategory,
    updateCategory,
    async deleteCategory(db: Db, organisationId: string, id: string): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete, its tombstone and its event go with the
      // COMMIT, and a category not live refuses it, so that the request runs again down here (404 or 409).
      if (finalStatementOffered()) return deleteCategoryInOneStatement(db, organisationId, id, nowIso(clock));
      const row = await liveCategory(db, organisationId, id);
      await softDelete(db, organisationId, 'category', row, nowIso(clock), (patch) => categoriesRepository.update(db, organisationId, id, patch));
      await events.record(db, organisationId, 'category.deleted', { id, summary: `Category ${JSON.stringify(row.name)} deleted.` });
    },
    async getCategoryByExternalId(db: Db, organisationId: string, externalId: string) {
      return toCategoryView(await foundOr404(categoriesRepository.findByExternalId(db, organisationId, externalId), 'category.not_found', `No category with external_id ${JSON.stringify(externalId)}.`));
    },
    async upsertCategoryByExternalId(db: Db, organisationId: string, externalId: string, input: Static<typeof CreateCategory>) {
      const existing = await categoriesRepository.findByExternalId(db, organisationId, externalId);
      if (!existing) return { created: true, view: await createCategory(db, organisationId, { ...input, external_id: externalId }) };
      return { created: false, view: await updateCategory(db, organisationId, existing.id, input) };
    },
  };
}

export type CourseService = ReturnType<typeof createCourseService>;
