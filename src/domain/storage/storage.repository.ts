import type { Selectable } from 'kysely';
import type { Db } from '../../db/database.ts';
import { deferredWrite } from '../../db/deferred-writes.ts';
import type { FilesTable, StorageTargetsTable } from '../../db/tables.ts';

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
  file(db: Db, organisationId: string, id: string): Promise<FileRow | undefined> {
    return db.selectFrom('files').selectAll().where('organisation_id', '=', organisationId).where('id', '=', id).executeTakeFirst();
  },
};
