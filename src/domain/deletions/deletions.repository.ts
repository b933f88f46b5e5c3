// Tombstones: one row per deleted resource, written in the transaction of the delete, read by
// `GET /<resource>/deletions` so that a client syncing with `updated_since` also learns what went away.
import { sql } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { TenantTableName } from '../../db/tenant-rows.ts';
import type { RowEvent } from '../../events/outbox.ts';
import { updateLiveInOneStatement, type OneStatementExtras } from '../one-statement-update.repository.ts';
import { newId } from '../../ids.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { insertMany } from '../../db/many-rows.ts';

export interface Tombstone {
  id: string;
  external_id: string | null;
  deleted_at: string;
}

/** The tombstone row of a resource deleted at `at`. */
export const tombstoneRow = (organisationId: string, resourceType: string, resource: { id: string; external_id: string | null }, at: string) => ({
  id: newId(),
  organisation_id: organisationId,
  resource_type: resourceType,
  resource_id: resource.id,
  external_id: resource.external_id,
  deleted_at: at,
});

// Deferrable: nobody reads its result, so on PostgreSQL it travels with the transaction's next statement or
// its COMMIT instead of costing the delete a round trip of its own (db/prepared.ts).
const insertTombstone = preparedQuery(
  (db: Db, id: string, organisationId: string, resourceType: string, resourceId: string, externalId: string | null, at: string) =>
    db.insertInto('deletions').values({ id, organisation_id: organisationId, resource_type: resourceType, resource_id: resourceId, external_id: externalId, deleted_at: at }),
  { deferrable: true },
);

export const deletionsRepository = {
  /**
   * PostgreSQL, as its transaction's final statement (db/final-statement.ts): the soft delete of a live row of
   * `table`, its tombstone and its event, in one statement that fails (atrium_require) when no live row was
   * deleted, so that it can travel with the COMMIT; refused, the request runs again on its full path
   * (soft-delete.ts), which tells 404 from 409. A PATCH of `deleted_at` (one-statement-update.repository.ts),
   * whose `extras` say what else the delete sets (a message cancelled), what the row must meet besides being
   * live (its activity live, a message not being sent) and what the event reads of the row as it was.
   */
  async softDeleteInOneStatement(db: Db, table: TenantTableName, resourceType: string, organisationId: string, id: string, event: RowEvent, extras: OneStatementExtras = {}): Promise<void> {
    const at = event.occurredAt;
    const tombstone = sql`insert into deletions (id, organisation_id, resource_type, resource_id, external_id, deleted_at)
      select ${newId()}::uuid, ${organisationId}::uuid, ${resourceType}::text, u.id, u.external_id, ${at}::timestamptz from u`;
    await updateLiveInOneStatement(db, table, organisationId, id, [['deleted_at', sql`${at}::timestamptz`]], event, { ...extras, alongside: [tombstone, ...(extras.alongside ?? [])] });
  },

  async record(db: Db, organisationId: string, resourceType: string, resource: { id: string; external_id: string | null }, at: string): Promise<void> {
    await insertTombstone(db, newId(), organisationId, resourceType, resource.id, resource.external_id, at);
  },

  /** Tombstones of many resources deleted at once (a course's enrolments), in multi-row INSERTs (db/many-rows.ts). */
  recordMany(db: Db, organisationId: string, resourceType: string, resources: { id: string; external_id: string | null }[], at: string): Promise<void> {
    return insertMany(db, 'deletions', resources.map((r) => tombstoneRow(organisationId, resourceType, r, at)));
  },

  /** Ordered by (deleted_at, tombstone id); `after` is the last row's pair. One extra row tells if more follow. */
  page(db: Db, organisationId: string, resourceType: string, q: { since?: string; after?: string[]; limit: number }) {
    let query = db
      .selectFrom('deletions')
      .select(['id as tombstone_id', 'resource_id as id', 'external_id', 'deleted_at'])
      .where('organisation_id', '=', organisationId)
      .where('resource_type', '=', resourceType);
    if (q.since) query = query.where('deleted_at', '>', q.since);
    if (q.after) query = query.where((eb) => eb(eb.refTuple('deleted_at', 'id'), '>', eb.tuple(q.after![0], q.after![1])));
    // Qualified: a bare "id" in ORDER BY would name the output column (the resource's id) on PostgreSQL, not the
    // tombstone's id the cursor compares.
    return query.orderBy('deleted_at').orderBy('deletions.id').limit(q.limit + 1).execute();
  },
};
