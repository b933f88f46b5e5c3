import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { SectionsTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type SectionRow = Selectable<SectionsTable>;

export const sectionsRepository = {
  ...tenantRows('sections'),

  /**
   * Applies `changes` to a live section in one statement, only where some value really differs, and returns
   * the updated row; undefined when nothing was updated (no such live section, or nothing to change).
   */
  async updateLiveIfChanged(db: Db, organisationId: string, id: string, changes: Pick<Partial<SectionRow>, 'title' | 'visible'>, at: string): Promise<SectionRow | undefined> {
    const entries = Object.entries(changes) as Array<['title' | 'visible', string | boolean]>;
    return db
      .updateTable('sections')
      .set({ ...changes, updated_at: at })
      .where('organisation_id', '=', organisationId)
      .where('id', '=', id)
      .where('deleted_at', 'is', null)
      .where((eb) => eb.or(entries.map(([column, value]) => eb(column, 'is distinct from', value))))
      .returningAll()
      .executeTakeFirst();
  },

  /** The greatest sort key in a course (deleted sections included, so keys are never reused). */
  async lastSortKey(db: Db, organisationId: string, courseId: string): Promise<string | null> {
    const row = await db
      .selectFrom('sections')
      .select('sort_key')
      .where('organisation_id', '=', organisationId)
      .where('course_id', '=', courseId)
      .orderBy('sort_key', 'desc')
      .limit(1)
      .executeTakeFirst();
    return row?.sort_key ?? null;
  },
};
