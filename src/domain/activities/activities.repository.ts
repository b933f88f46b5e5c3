import { sql, type RawBuilder, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { quotedForSummarySql } from '../../events/summary-text.ts';
import type { ActivitiesTable } from '../../db/tables.ts';
import { tenantRows } from '../../db/tenant-rows.ts';
import { changedColumnsSql, insertInOneStatement, updateLiveInOneStatement, type ColumnChange, type NamedStatement, liveRowSql } from '../one-statement-update.repository.ts';
import { extensionsRepository } from '../extensions/extensions.repository.ts';

export type ActivityRow = Selectable<ActivitiesTable>;

/**
 * Whether the activity that the column `activityIdColumn` of `table` (a table or its alias) names is live, as an
 * SQL condition: a page's premise in a one-statement change, or a column read with the page.
 */
export const activityLiveSql = (table: string, activityIdColumn: string) =>
  sql<boolean>`exists(select 1 from activities a where a.organisation_id = ${sql.ref(`${table}.organisation_id`)} and a.id = ${sql.ref(`${table}.${activityIdColumn}`)} and a.deleted_at is null)`;

/** The settings SQL of each type that has any (ActivityType.settingsJsonSql), by type name. */
export type SettingsJsonSql = Record<string, (activityId: RawBuilder<unknown>) => RawBuilder<string | null>>;

/** What a new activity's checks read, at once: its course, its type's switch, its section (each null where absent or not asked). */
export interface CreationFacts {
  course_id: string | null;
  course_deleted_at: string | null;
  extension_disabled: boolean | number | null;
  section_course_id: string | null;
  section_deleted_at: string | null;
}

/** The settings of the activity `row` names (a table or CTE alias), as JSON text by its type (null: a type without). */
function settingsJsonOf(settings: SettingsJsonSql, row: RawBuilder<unknown>): RawBuilder<string | null> {
  const types = Object.entries(settings);
  if (types.length === 0) return sql`null::text`;
  return sql`case ${row}.type ${sql.join(types.map(([type, of]) => sql`when ${type}::text then ${of(sql`${row}.id`)}`), sql` `)} end`;
}

export const activitiesRepository = {
  ...tenantRows('activities'),

  /** PostgreSQL: the activity with its type's settings as JSON text (`settings_json`), in one read rather than two. */
  findWithSettings(db: Db, organisationId: string, id: string, settings: SettingsJsonSql): Promise<(ActivityRow & { settings_json: string | null }) | undefined> {
    return db
      .selectFrom('activities')
      .selectAll()
      .select(settingsJsonOf(settings, sql`activities`).as('settings_json'))
      .where('organisation_id', '=', organisationId)
      .where('id', '=', id)
      .executeTakeFirst();
  },

  /**
   * The facts a new activity's checks need, in one read rather than one each (a round trip each on
   * PostgreSQL, inside the transaction): the course, the switch of the type's extension, the section.
   */
  async creationFacts(db: Db, organisationId: string, q: { courseId: string; extension: string | undefined; sectionId: string | undefined }): Promise<CreationFacts> {
    const course = () => db.selectFrom('courses').where('organisation_id', '=', organisationId).where('id', '=', q.courseId);
    const section = () => db.selectFrom('sections').where('organisation_id', '=', organisationId).where('id', '=', q.sectionId ?? null);
    const row = await db
      .selectNoFrom([
        course().select('id').as('course_id'),
        course().select('deleted_at').as('course_deleted_at'),
        (q.extension === undefined ? sql<boolean | number | null>`null` : sql<boolean | number | null>`${extensionsRepository.isDisabledSql(organisationId, q.extension)}`).as('extension_disabled'),
        section().select('course_id').as('section_course_id'),
        section().select('deleted_at').as('section_deleted_at'),
      ])
      .executeTakeFirstOrThrow();
    return row as CreationFacts;
  },

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
        ? [sql<boolean>`exists(select 1 from sections s where s.organisation_id = b.organisation_id and s.id = ${changes.section_id}::uuid and s.course_id = b.course_id and s.deleted_at is null)`]
        : [];
    const settingsJson = settingsJsonOf(settings, sql`u`);
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
          ['summary', sql`'Activity ' || u.type || ' ' || ${quotedForSummarySql(sql`u.name`)} || ' changed: ' || ${changedColumnsSql(asked.map(([column]) => column))} || '.'`],
        ],
      },
      { premises, answer: [['settings_json', settingsJson]] },
    );
  },

  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new activity, `row` as the service made
   * it, the rows its type makes with it (`effects`) and its event saying `summary`. The premises, each a refusal of
   * the full path (in creationFacts' order there): the course there and live, the type's extension (`extension`) not
   * switched off, the section, if one is named, a live section of the course; an external id taken makes nothing
   * either.
   */
  createInOneStatement(db: Db, row: ActivityRow, summary: string, extension: string, effects: readonly NamedStatement[]): Promise<ActivityRow> {
    const org = row.organisation_id;
    const premises = [
      liveRowSql('courses', org, row.course_id),
      sql<boolean>`not ${extensionsRepository.isDisabledSql(org, extension)}`,
    ];
    if (row.section_id !== null) {
      premises.push(sql<boolean>`exists(select 1 from sections s where s.organisation_id = ${org} and s.id = ${row.section_id} and s.course_id = ${row.course_id} and s.deleted_at is null)`);
    }
    const event = { type: 'activity.created' as const, occurredAt: row.created_at, members: [['course_id', sql`u.course_id`], ['type', sql`u.type`], ['summary', sql`${summary}::text`]] as Array<[string, RawBuilder<unknown>]> };
    return insertInOneStatement<ActivityRow>(db, 'activities', row, event, { premises, effects });
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
