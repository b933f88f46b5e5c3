// Confirmations of destructive MCP tools (docs/mcp.md#confirmations). A confirmation token or an elicitation's request
// state is signed with a deployment-wide key (every API process must accept what another handed out), and each
// is good for one use: its nonce is recorded here when it is used, so a second use fails on every process.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('mcp_confirmations_used')
    .addColumn('nonce', 'text', (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('used_at', t.timestamp, (c) => c.notNull())
    // After this the signature refuses the token anyway, so the row may go.
    .addColumn('expires_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mcp_confirmations_used_expiry').on('mcp_confirmations_used').column('expires_at').execute();
  await db.insertInto('deployment_secrets').values({ name: 'mcp_confirmation_key', value: randomBytes(32).toString('base64url') }).execute();
}
