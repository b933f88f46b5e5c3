import type { Db } from '../db/database.ts';
import type { McpSettingsTable } from '../db/auth-tables.ts';
import { preparedQuery } from '../db/prepared.ts';

// Read by /mcp whenever the organisation's credentials epoch has moved (mcp-settings.service.ts): compiled once.
const settingsOf = preparedQuery((db: Db, organisationId: string) => db.selectFrom('mcp_settings').selectAll().where('organisation_id', '=', organisationId));

export const mcpSettingsRepository = {
  async find(db: Db, organisationId: string) {
    return (await settingsOf(db, organisationId))[0];
  },
  async save(db: Db, row: McpSettingsTable): Promise<void> {
    const { organisation_id, ...rest } = row;
    await db.insertInto('mcp_settings').values(row).onConflict((oc) => oc.column('organisation_id').doUpdateSet(rest)).execute();
  },
};
