// Tombstones: one row per deleted resource, written in the transaction of the delete, read by
// `GET /<resource>/deletions` so that a client syncing with `updated_since` also learns what went away.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { TenantTableName } from '../../db/tenant-rows.ts';
import { runFinalStatement } from '../../db/final-statement.ts';
import { eventOfChangedRow, type RowEvent } from '../../events/outbox.ts';
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
   * (soft-delete.ts), which tells 404 from 409. An area's `premises` (conditions on the row, its columns
   * unqualified) are its refusals: one not met deletes nothing, and the full path answers it. `set` are columns
   * the delete changes besides deleted_at and updated_at; `effects` are further data-modifying CTEs (`name AS
   * (…)`) that read the deleted row `u`.
   */
  async softDeleteInOneStatement(
    db: Db,
    table: TenantTableName,
    resourceType: string,
    organisationId: string,
    id: string,
    event: RowEvent,
    options: { premises?: RawBuilder<unknown>[]; set?: ReadonlyArray<readonly [column: string, value: RawBuilder<unknown>]>; effects?: RawBuilder<unknown>[] } = {},
  ): Promise<void> {
    const at = event.occurredAt;
    const set = (options.set ?? []).map(([column, value]) => sql`, ${sql.ref(column)} = ${value}`);
    const premises = (options.premises ?? []).map((premise) => sql` and (${premise})`);
    const effects = (options.effects ?? []).map((effect) => sql`, ${effect}`);
    const query = sql`with u as (
        update ${sql.table(table)} set deleted_at = ${at}::timestamptz, updated_at = ${at}::timestamptz${sql.join(set, sql``)}
        where organisation_id = ${organisationId} and id = ${id} and deleted_at is null${sql.join(premises, sql``)}
        returning *
      ), d as (
        insert into deletions (id, organisation_id, resource_type, resource_id, external_id, deleted_at)
        select ${newId()}::uuid, ${organisationId}::uuid, ${resourceType}::text, u.id, u.external_id, ${at}::timestamptz from u
      ), e as (${eventOfChangedRow(organisationId, event)})${sql.join(effects, sql``)}
      select atrium_require(exists(select 1 from u), ${`${resourceType} deleted`}::text) as held`.compile(db);
    await runFinalStatement(db, query);
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
