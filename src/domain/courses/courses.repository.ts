import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import type { CategoriesTable, CoursesTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

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
