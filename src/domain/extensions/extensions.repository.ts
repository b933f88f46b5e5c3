import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';

export const extensionsRepository = {
  switches(db: Db, organisationId: string) {
    return db.selectFrom('organisation_extensions').select(['extension', 'enabled', 'updated_at']).where('organisation_id', '=', organisationId).execute();
  },
  /** isDisabled as an SQL expression, for a caller that reads it with other things in one query. */
  isDisabledSql(organisationId: string, extension: string) {
    return sql<boolean | number>`exists (select 1 from organisation_extensions where organisation_id = ${organisationId} and extension = ${extension} and not enabled)`;
  },
  async isDisabled(db: Db, organisationId: string, extension: string): Promise<boolean> {
    const row = await db
      .selectFrom('organisation_extensions')
      .select('enabled')
      .where('organisation_id', '=', organisationId)
      .where('extension', '=', extension)
      .executeTakeFirst();
    return row !== undefined && !row.enabled;
  },
  async set(db: Db, organisationId: string, extension: string, enabled: boolean, at: string): Promise<void> {
    await db
      .insertInto('organisation_extensions')
      .values({ organisation_id: organisationId, extension, enabled, updated_at: at })
      .onConflict((oc) => oc.columns(['organisation_id', 'extension']).doUpdateSet({ enabled, updated_at: at }))
      .execute();
  },
};
