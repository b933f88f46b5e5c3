import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { deletionsRepository, type SoftDeleteOptions } from '../deletions/deletions.repository.ts';
import type { RowEvent } from '../../events/outbox.ts';
import type { CategoriesTable, CoursesTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { newId } from '../../ids.ts';
import { enrolmentsRepository } from '../enrolments/enrolments.repository.ts';
import { changedColumnsSql, updateLiveInOneStatement, type ColumnChange } from '../one-statement-update.repository.ts';

export type CourseRow = Selectable<CoursesTable>;
export type CategoryRow = Selectable<CategoriesTable>;

export const coursesRepository = tenantRows('courses');
export const categoriesRepository = tenantRows('categories');

/** PostgreSQL, as a final statement: a category's soft delete with its tombstone and event (deletions.repository.ts). */
export function deleteCategoryInOneStatement(db: Db, organisationId: string, id: string, at: string): Promise<void> {
  return deletionsRepository.softDeleteInOneStatement(db, 'categories', 'category', organisationId, id, {
    type: 'category.deleted',
    occurredAt: at,
    members: [['summary', sql`'Category ' || to_json(u.name)::text || ' deleted.'`]],
  });
}

/**
 * PostgreSQL: a course's soft delete with its tombstone and event, and the end of its enrolments, each with its
 * tombstone and event (enrolments.repository.ts), as the service makes them: the course's tombstone first, its
 * event last, which counts the enrolments ended.
 */
function courseDeletion(organisationId: string, at: string): [RowEvent, SoftDeleteOptions] {
  const tombstoneId = newId();
  const effects = enrolmentsRepository.endAllInStatement(organisationId, 'course_id', sql`select id from u`, at);
  const ended = sql`(select case when count(*) > 0 then '; ' || count(*) || ' enrolment(s) ended' else '' end from ended)`;
  return [{ type: 'course.deleted', occurredAt: at, members: [['summary', sql`'Course ' || to_json(u.shortname)::text || ' deleted' || ${ended} || '.'`]] }, { tombstoneId, effects }];
}

/** As a final statement (deletions.repository.ts). */
export const deleteCourseInOneStatement = (db: Db, organisationId: string, id: string, at: string): Promise<void> =>
  deletionsRepository.softDeleteInOneStatement(db, 'courses', 'course', organisationId, id, ...courseDeletion(organisationId, at));

/** As an ordinary statement that answers whether it deleted (deletions.repository.ts: softDeleteAtOnce). */
export const deleteCourseAtOnce = (db: Db, organisationId: string, id: string, at: string): Promise<boolean> =>
  deletionsRepository.softDeleteAtOnce(db, 'courses', 'course', organisationId, id, ...courseDeletion(organisationId, at));

/** The SQL type of each column a PATCH may set. */
const courseColumns = { fullname: 'text', shortname: 'text', category_id: 'uuid', visible: 'boolean' } as const;
const categoryColumns = { name: 'text', parent_id: 'uuid' } as const;

/** The fields of a patch as typed column changes, in the patch's order (the order its event names them in). */
function asked(patch: Record<string, unknown>, types: Record<string, string>): ColumnChange[] {
  return Object.entries(patch)
    .filter(([, value]) => value !== undefined)
    .map(([column, value]) => {
      if (types[column] === undefined) throw new Error(`no column ${column} to patch`);
      return [column, sql`${value}::${sql.raw(types[column])}`] as const;
    });
}

/** A category referenced by a patch is a live one of the organisation (else the full path answers 422). */
const liveCategory = (organisationId: string, id: string): RawBuilder<boolean> =>
  sql<boolean>`exists(select 1 from categories where organisation_id = ${organisationId} and id = ${id}::uuid and deleted_at is null)`;

/**
 * PostgreSQL, as a final statement (one-statement-update.repository.ts): a course's or a category's PATCH and its
 * event, worded as the service words it (`<Label> "<name before the change>" changed: <fields that changed, in
 * the patch's order>.`); the category it asks to refer to, if any, must be live.
 */
function patchInOneStatement<Row>(
  db: Db,
  kind: { table: 'courses' | 'categories'; event: 'course.updated' | 'category.updated'; label: string; named: string; columns: Record<string, string> },
  organisationId: string,
  id: string,
  patch: Record<string, unknown>,
  referenced: string | null | undefined,
  at: string,
): Promise<Row> {
  const changes = asked(patch, kind.columns);
  const summary = sql`${`${kind.label} `}::text || to_json(${sql.ref(`b.${kind.named}`)})::text || ' changed: ' || ${changedColumnsSql(changes.map(([c]) => c))} || '.'`;
  return updateLiveInOneStatement<Row>(db, kind.table, organisationId, id, changes, { type: kind.event, occurredAt: at, members: [['summary', summary]] }, {
    premises: referenced ? [liveCategory(organisationId, referenced)] : [],
  });
}

const course = { table: 'courses', event: 'course.updated', label: 'Course', named: 'shortname', columns: courseColumns } as const;
const category = { table: 'categories', event: 'category.updated', label: 'Category', named: 'name', columns: categoryColumns } as const;

export const updateCourseInOneStatement = (db: Db, organisationId: string, id: string, patch: Partial<Pick<CourseRow, 'fullname' | 'shortname' | 'category_id' | 'visible'>>, at: string) =>
  patchInOneStatement<CourseRow>(db, course, organisationId, id, patch, patch.category_id, at);

export const updateCategoryInOneStatement = (db: Db, organisationId: string, id: string, patch: Partial<Pick<CategoryRow, 'name' | 'parent_id'>>, at: string) =>
  patchInOneStatement<CategoryRow>(db, category, organisationId, id, patch, patch.parent_id, at);
