import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { quotedForSummarySql } from '../../events/summary-text.ts';
import type { ActivitiesTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';

export type ActivityRow = Selectable<ActivitiesTable>;

export const activitiesRepository = {
  ...tenantRows('activities'),

  /**
   * PostgreSQL, as a final statement: an activity's soft delete with its tombstone and event
   * (deletions.repository.ts), its summary as the service words it (`Activity <type> "<name>" deleted.`).
   */
  deleteInOneStatement(db: Db, organisationId: string, id: string, at: string): Promise<void> {
    return deletionsRepository.softDeleteInOneStatement(db, 'activities', 'activity', organisationId, id, {
      type: 'activity.deleted',
      occurredAt: at,
      members: [['course_id', sql`u.course_id`], ['type', sql`u.type`], ['summary', sql`'Activity ' || u.type || ' ' || ${quotedForSummarySql(sql`u.name`)} || ' deleted.'`]],
    });
  },
};
