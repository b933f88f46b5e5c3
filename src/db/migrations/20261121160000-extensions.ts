// Per-organisation switches for the compiled-in extensions. No row means the extension is on.
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('organisation_extensions')
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
    .addColumn('extension', 'text', (c) => c.notNull())
    .addColumn('enabled', t.bool, (c) => c.notNull())
    .addColumn('updated_at', t.timestamp, (c) => c.notNull())
    .addPrimaryKeyConstraint('organisation_extensions_pk', ['organisation_id', 'extension'])
    .execute();
}
