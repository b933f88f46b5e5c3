// What an organisation's administrator chose on /admin/integrations/mcp (docs/mcp.md#the-administrators-page). No row: the defaults
// (server on, every tool on but the destructive ones, clients may register themselves).
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('mcp_settings')
    .addColumn('organisation_id', t.uuid, (c) => c.primaryKey().references('organisations.id'))
    .addColumn('enabled', t.bool, (c) => c.notNull())
    .addColumn('allow_self_registration', t.bool, (c) => c.notNull())
    // JSON: the tools switched on (every other tool is off), by tool name.
    .addColumn('tools_on', 'text', (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .execute();
}
