// A soft delete, the same for every resource that has one: the row stays, with `deleted_at` (and `updated_at`)
// set, and its tombstone is recorded for `GET /<collection>/deletions`, both in the caller's transaction. The
// caller writes the row through its own repository and records its own event, which says what the row was.
import type { Db } from '../../db/database.ts';
import { deletionsRepository } from './deletions.repository.ts';

export async function softDelete(
  db: Db,
  organisationId: string,
  resourceType: string,
  row: { id: string; external_id: string | null },
  at: string,
  markDeleted: (patch: { deleted_at: string; updated_at: string }) => Promise<unknown>,
): Promise<void> {
  await markDeleted({ deleted_at: at, updated_at: at });
  await deletionsRepository.record(db, organisationId, resourceType, row, at);
}
