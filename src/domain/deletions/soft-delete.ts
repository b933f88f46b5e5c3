// A soft delete, the same for every resource that has one: the row stays, with `deleted_at` (and `updated_at`)
// set, and its tombstone is recorded for `GET /<collection>/deletions`, both in the caller's transaction. The
// caller writes the row through its own repository and records its own event, which says what the row was.
import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { TenantTableName } from '../../db/tenant-rows.ts';
import { runFinalStatement } from '../../db/final-statement.ts';
import { newId } from '../../ids.ts';
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

/** What a soft delete in one statement records: its event's type, and its data's members besides `id`. */
export interface DeletionEvent {
  type: string;
  occurredAt: string;
  /**
   * The event data's members after `id`, in order (EventRecorder writes `{"id":…, …}`): each an SQL expression
   * over the deleted row, `u` (`sql\`u.course_id\``), whose value is written as a JSON string.
   */
  members: Array<[name: string, value: RawBuilder<unknown>]>;
}

/**
 * PostgreSQL, as its transaction's final statement (db/final-statement.ts): the soft delete of a live row, its
 * tombstone and its event, in one statement that fails (atrium_require) when no live row was deleted, so that it
 * can travel with the COMMIT; refused, the request runs again on its full path (softDelete above), which tells
 * 404 from 409. The event's data is made by the database, as EventRecorder.record writes it.
 */
export async function softDeleteInOneStatement(db: Db, table: TenantTableName, resourceType: string, organisationId: string, id: string, event: DeletionEvent): Promise<void> {
  const at = event.occurredAt;
  const data = event.members.reduce((json, [name, value]) => sql`${json} || ${`,${JSON.stringify(name)}:`}::text || to_json((${value})::text)::text`, sql`'{"id":' || to_json(u.id::text)::text`);
  const query = sql`with u as (
      update ${sql.table(table)} set deleted_at = ${at}::timestamptz, updated_at = ${at}::timestamptz
      where organisation_id = ${organisationId} and id = ${id} and deleted_at is null
      returning *
    ), d as (
      insert into deletions (id, organisation_id, resource_type, resource_id, external_id, deleted_at)
      select ${newId()}::uuid, ${organisationId}::uuid, ${resourceType}::text, u.id, u.external_id, ${at}::timestamptz from u
    ), e as (
      insert into outbox_events (id, organisation_id, type, occurred_at, data, dispatched_at)
      select ${newId()}::uuid, ${organisationId}::uuid, ${event.type}::text, ${at}::timestamptz, ${data} || '}', null from u
    )
    select atrium_require(exists(select 1 from u), ${`${resourceType} deleted`}::text) as held`.compile(db);
  await runFinalStatement(db, query);
}
