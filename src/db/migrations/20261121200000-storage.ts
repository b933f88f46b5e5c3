// Storage targets of an organisation and the files written to them. A file remembers the target it was
// written to (null: the deployment's storage), so changing the default never moves or loses a file.
import type { Kysely } from 'kysely';
import { columnTypes } from '../column-types.ts';
import { changeTimes, createTenantTable } from '../migration-tables.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await createTenantTable(db, 'storage_targets')
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('directory', 'text', (c) => c.notNull())
    .addColumn('is_default', t.bool, (c) => c.notNull())
    .$call(changeTimes(db))
    .addUniqueConstraint('storage_targets_org_directory_unique', ['organisation_id', 'directory'])
    .execute();

  await createTenantTable(db, 'files')
    .addColumn('storage_target_id', t.uuid, (c) => c.references('storage_targets.id'))
    .addColumn('filename', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('created_by', t.uuid, (c) => c.notNull())
    .addColumn('created_at', t.timestamp, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('files_org').on('files').columns(['organisation_id', 'id']).execute();
}
