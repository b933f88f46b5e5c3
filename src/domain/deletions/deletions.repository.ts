// Tombstones: one row per deleted resource, written in the transaction of the delete, read by
// `GET /<resource>/deletions` so that a client syncing with `updated_since` also learns what went away.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { TenantTableName } from '../../db/tenant-rows.ts';
import { runFinalStatement } from '../../db/final-statement.ts';
import { isPostgres } from '../../db/column-types.ts';
import { auditedWithFirstEvent } from '../../audit/audit-log.ts';
import { eventOfChangedRow, type RowEvent } from '../../events/outbox.ts';
import { newId } from '../../ids.ts';
import { preparedQuery } from '../../db/prepared.ts';
import { insertMany } from '../../db/many-rows.ts';
import { compileByShape } from '../../db/statement-shapes.ts';
import { andPremisesSql, namedStatementsSql, type NamedStatement } from '../one-statement-update.repository.ts';

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

export interface SoftDeleteOptions {
  /** Conditions over the row (its own columns) that must hold too, else nothing is deleted and the request takes its full path. */
  premises?: RawBuilder<boolean>[];
  /** Columns the delete changes besides deleted_at and updated_at (a subscription disabled), typed SQL values. */
  set?: ReadonlyArray<readonly [column: string, value: RawBuilder<unknown>]>;
  /** Further effects of the delete (its enrolments ended), as named CTEs that may read the deleted row `u`; the event may read them. */
  effects?: readonly NamedStatement[];
  /** The tombstone's id, when it must sort before ids made for the effects (newId, made first). */
  tombstoneId?: string;
}

/**
 * The soft delete of a live row of `table` (and `premises`), its tombstone, its `effects` and its event, in one
 * statement (PostgreSQL) that ends in `outcome`, over `u`, the rows it deleted.
 */
function softDeleteStatement(db: Db, table: TenantTableName, resourceType: string, organisationId: string, id: string, event: RowEvent, options: SoftDeleteOptions, outcome: RawBuilder<unknown>) {
  const { premises = [], set = [], effects = [], tombstoneId = newId() } = options;
  // Compiled once per shape (db/statement-shapes.ts): the key names everything but the values and the parts.
  const key = ['delete', table, set.map(([column]) => column), premises.length, effects.map(([name]) => name), event.members.map(([name]) => name)];
  const parts = [...set.map(([, value]) => value), ...premises, ...effects.map(([, statement]) => statement), ...event.members.map(([, value]) => value), outcome];
  const values = [event.occurredAt, organisationId, id, tombstoneId, resourceType, event.type, newId()];
  return compileByShape<{ held: boolean }>(db, key, values, parts, (value, part) => {
    let p = 0;
    const alsoSet = sql.join(set.map(([column]) => sql`, ${sql.ref(column)} = ${part(p++)}`), sql``);
    const held = andPremisesSql(premises.map(() => part(p++) as RawBuilder<boolean>));
    const named = effects.map(([name]): NamedStatement => [name, part(p++)]);
    const members = event.members.map(([name]): [string, RawBuilder<unknown>] => [name, part(p++)]);
    const at = value(0) as string;
    return sql<{ held: boolean }>`with u as (
      update ${sql.table(table)} set deleted_at = ${at}::timestamptz, updated_at = ${at}::timestamptz${alsoSet}
      where organisation_id = ${value(1)} and id = ${value(2)} and deleted_at is null${held}
      returning *
    ), d as (
      insert into deletions (id, organisation_id, resource_type, resource_id, external_id, deleted_at)
      select ${value(3)}::uuid, ${value(1)}::uuid, ${value(4)}::text, u.id, u.external_id, ${at}::timestamptz from u
    )${namedStatementsSql(named)}, e as (${eventOfChangedRow(value(1) as string, { type: value(5) as RowEvent['type'], occurredAt: at, members }, sql`u`, sql`${value(6)}::uuid`)})
    select ${part(p++)} as held`;
  });
}

export const deletionsRepository = {
  /**
   * PostgreSQL, as its transaction's final statement (db/final-statement.ts): the soft delete of a live row of
   * `table`, its tombstone and its event, in one statement that fails (atrium_require) when no live row was
   * deleted, so that it can travel with the COMMIT; refused, the request runs again on its full path
   * (soft-delete.ts), which tells 404 from 409.
   */
  async softDeleteInOneStatement(db: Db, table: TenantTableName, resourceType: string, organisationId: string, id: string, event: RowEvent, options: SoftDeleteOptions = {}): Promise<void> {
    await runFinalStatement(db, softDeleteStatement(db, table, resourceType, organisationId, id, event, options, sql`atrium_require(exists(select 1 from u), ${`${resourceType} deleted`}::text)`));
  },

  /**
   * The same statement where it is not the transaction's last (a request with an Idempotency-Key, whose record
   * follows): it answers whether it deleted instead of failing, so that the request can take its full path in
   * the same transaction when it did not. On SQLite it does nothing and answers false; so too under an admin
   * page's or a CLI command's audit scope, whose entry the service's first event writes (audit-log.ts).
   */
  async softDeleteAtOnce(db: Db, table: TenantTableName, resourceType: string, organisationId: string, id: string, event: RowEvent, options: SoftDeleteOptions = {}): Promise<boolean> {
    if (!isPostgres(db) || auditedWithFirstEvent()) return false;
    const { rows } = await db.executeQuery(softDeleteStatement(db, table, resourceType, organisationId, id, event, options, sql`exists(select 1 from u)`));
    return rows[0].held;
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
