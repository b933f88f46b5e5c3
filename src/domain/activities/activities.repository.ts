import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { quotedForSummarySql } from '../../events/summary-text.ts';
import type { ActivitiesTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { updateLiveInOneStatement, type ColumnChange } from '../one-statement-update.repository.ts';

export type ActivityRow = Selectable<ActivitiesTable>;

/** The settings SQL of each type that has any (ActivityType.settingsJsonSql), by type name. */
export type SettingsJsonSql = Record<string, (activityId: RawBuilder<unknown>) => RawBuilder<string | null>>;

export const activitiesRepository = {
  ...tenantRows('activities'),

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): the rename or move of a live activity,
   * its event worded as the service words it (`Activity <type> "<name>" changed: name, section_id.`, naming what
   * really changed), and its type's settings as JSON text (`settings_json`). A section asked for must be a live
   * section of the activity's course: when it is not, nothing changes and the full path answers the 422.
   */
  updateInOneStatement(db: Db, organisationId: string, id: string, changes: { name?: string; section_id?: string | null }, at: string, settings: SettingsJsonSql): Promise<ActivityRow & { settings_json: string | null }> {
    const asked: ColumnChange[] = [];
    if (changes.name !== undefined) asked.push(['name', sql`${changes.name}::text`]);
    if (changes.section_id !== undefined) asked.push(['section_id', sql`${changes.section_id}::uuid`]);
    const premises =
      typeof changes.section_id === 'string'
        ? [sql`exists(select 1 from sections s where s.organisation_id = t.organisation_id and s.id = ${changes.section_id}::uuid and s.course_id = t.course_id and s.deleted_at is null)`]
        : [];
    const changed = asked.map(([column]) => sql`case when ${sql.ref(`u.was_${column}`)} is distinct from ${sql.ref(`u.${column}`)} then ${column}::text end`);
    const types = Object.entries(settings);
    const settingsJson = types.length === 0 ? sql`null::text` : sql`case u.type ${sql.join(types.map(([type, of]) => sql`when ${type}::text then ${of(sql`u.id`)}`), sql` `)} end`;
    return updateLiveInOneStatement(
      db,
      'activities',
      organisationId,
      id,
      asked,
      {
        type: 'activity.updated',
        occurredAt: at,
        members: [
          ['course_id', sql`u.course_id`],
          ['type', sql`u.type`],
          ['summary', sql`'Activity ' || u.type || ' ' || ${quotedForSummarySql(sql`u.name`)} || ' changed: ' || concat_ws(', ', ${sql.join(changed)}) || '.'`],
        ],
      },
      { premises, before: asked.map(([column]) => column), answer: [['settings_json', settingsJson]] },
    );
  },

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
