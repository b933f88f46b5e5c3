import type { Db } from '../../db/database.ts';

export const extensionsRepository = {
  switches(db: Db, organisationId: string) {
    return db.selectFrom('organisation_extensions').select(['extension', 'enabled', 'updated_at']).where('organisation_id', '=', organisationId).execute();
  },
  /** The organisation's switch of `extension` (null where it set none: on), as a subquery of a caller's read. */
  switchOf(db: Db, organisationId: string, extension: string) {
    return db.selectFrom('organisation_extensions').select('enabled').where('organisation_id', '=', organisationId).where('extension', '=', extension);
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
