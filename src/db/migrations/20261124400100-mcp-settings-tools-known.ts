// The tools an administrator saw on /admin/integrations/mcp when they last saved: a tool added to the service
// after that (a new operation) follows its default rather than being off because nobody ticked it.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  // JSON array of tool names; null for rows saved before this column existed (every tool then counts as known).
  await db.schema.alterTable('mcp_settings').addColumn('tools_known', 'text').execute();
}
