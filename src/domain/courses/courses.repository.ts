import type { Selectable } from 'kysely';
import type { CategoriesTable, CoursesTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type CourseRow = Selectable<CoursesTable>;
export type CategoryRow = Selectable<CategoriesTable>;

export const coursesRepository = tenantRows('courses');
export const categoriesRepository = tenantRows('categories');
