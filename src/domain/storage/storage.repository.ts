import { sql, type Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { deferredWrite } from '../../db/deferred-writes.ts';
import type { FilesTable, StorageTargetsTable } from '../../db/tables.ts';
import { insertInOneStatement } from '../one-statement-update.repository.ts';

export type StorageTargetRow = Selectable<StorageTargetsTable>;
export type FileRow = Selectable<FilesTable>;

export const storageRepository = {
  targets(db: Db, organisationId: string): Promise<StorageTargetRow[]> {
    return db.selectFrom('storage_targets').selectAll().where('organisation_id', '=', organisationId).orderBy('id').execute();
  },
  target(db: Db, organisationId: string, id: string): Promise<StorageTargetRow | undefined> {
    return db.selectFrom('storage_targets').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },
  defaultTarget(db: Db, organisationId: string): Promise<StorageTargetRow | undefined> {
    return db.selectFrom('storage_targets').selectAll().where('organisation_id', '=', organisationId).where('is_default', '=', true).executeTakeFirst();
  },
  async insertTarget(db: Db, row: StorageTargetRow): Promise<void> {
    await db.insertInto('storage_targets').values(row).execute();
  },
  /** Makes `id` the default (or, with null, none: the deployment storage). */
  async setDefault(db: Db, organisationId: string, id: string | null, at: string): Promise<void> {
    await db.updateTable('storage_targets').set({ is_default: false, updated_at: at }).where('organisation_id', '=', organisationId).where('is_default', '=', true).execute();
    if (id !== null) await db.updateTable('storage_targets').set({ is_default: true, updated_at: at }).where('organisation_id', '=', organisationId).where('id', '=', id).execute();
  },
  /**
   * A deferred write (db/deferred-writes.ts): nobody reads its result, and its only key is the new id, so on
   * PostgreSQL it rides with the file's event and the COMMIT rather than costing the upload a round trip.
   */
  async insertFile(db: Db, row: FileRow): Promise<void> {
    await deferredWrite(db, db.insertInto('files').values(row));
  },
  /**
   * PostgreSQL, as a final statement (one-statement-update.repository.ts): a new file's row, `row` as the service
   * made it, and its event `{"id","storage_target_id","summary"}` with the values given. The premise: the
   * organisation's default target is still `row.storage_target_id` (null: the deployment storage), where the service
   * wrote the bytes; when it is not, nothing is made and the request takes its full path, which reads the default.
   */
  createFileInOneStatement(db: Db, row: FileRow, event: { storageTargetId: string; summary: string }): Promise<FileRow> {
    const defaultTarget = sql`select t.id from storage_targets t where t.organisation_id = ${row.organisation_id} and t.is_default`;
    return insertInOneStatement<FileRow>(
      db,
      'files',
      row,
      { type: 'file.created', occurredAt: row.created_at, members: [['storage_target_id', sql`${event.storageTargetId}::text`], ['summary', sql`${event.summary}::text`]] },
      { premises: [sql<boolean>`(${defaultTarget}) is not distinct from ${row.storage_target_id}::uuid`] },
    );
  },
  file(db: Db, organisationId: string, id: string): Promise<FileRow | undefined> {
    return db.selectFrom('files').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },
};
