import type { Db } from '../db/database.ts';
import type { McpSettingsTable } from '../db/auth-tables.ts';

export const mcpSettingsRepository = {
  find(db: Db, organisationId: string) {
    return db.selectFrom('mcp_settings').selectAll().where('organisation_id', '=', organisationId).executeTakeFirst();
  },
  async save(db: Db, row: McpSettingsTable): Promise<void> {
    const { organisation_id, ...rest } = row;
    await db.insertInto('mcp_settings').values(row).onConflict((oc) => oc.column('organisation_id').doUpdateSet(rest)).execute();
  },
};
