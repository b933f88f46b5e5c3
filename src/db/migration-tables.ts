// What the migrations write again for table after table: the columns every table of an organisation's rows
// starts with, the columns and constraint every resource of the API has, and the indexes its lists page by.
// Migrations run once and are never edited in effect: a change here must leave the DDL of every migration as it
// was (compare a dump of a freshly migrated SQLite file and PostgreSQL schema before and after).
import type { CreateTableBuilder, Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

export type TableBuilder = CreateTableBuilder<string, any>;

/** `create table` with the two columns every table of an organisation's rows starts with: its id and its organisation. */
export function createTenantTable(db: Kysely<any>, table: string): TableBuilder {
  const t = columnTypes(db);
  return db.schema
    .createTable(table)
    .addColumn('id', t.uuid, (c) => c.primaryKey())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'));
}

/** When the row was made and last changed, both always set (for `.$call`). */
export function changeTimes(db: Kysely<any>): (table: TableBuilder) => TableBuilder {
  const t = columnTypes(db);
  return (table) => table.addColumn('created_at', t.timestamp, (c) => c.notNull()).addColumn('updated_at', t.timestamp, (c) => c.notNull());
}

/**
 * The table of a resource of the API (docs/conventions.md): id, organisation and `external_id` first, then the
 * resource's own `columns`, then its change times and `deleted_at` (resources are soft-deleted), and at most one
 * row per external id in an organisation.
 */
export function createResourceTable(db: Kysely<any>, table: string, columns: (table: TableBuilder) => TableBuilder): TableBuilder {
  const t = columnTypes(db);
  return columns(createTenantTable(db, table).addColumn('external_id', 'text'))
    .$call(changeTimes(db))
    .addColumn('deleted_at', t.timestamp)
    .addUniqueConstraint(`${table}_org_external_unique`, ['organisation_id', 'external_id']);
}

/** The index a list pages by when asked for changes since a time: (organisation, updated_at, id). */
export async function createChangesIndex(db: Kysely<any>, table: string): Promise<void> {
  await db.schema.createIndex(`${table}_updated`).on(table).columns(['organisation_id', 'updated_at', 'id']).execute();
}

/** The index a list pages by otherwise: (organisation, id). */
export async function createPagedByIdIndex(db: Kysely<any>, table: string): Promise<void> {
  await db.schema.createIndex(`${table}_org_id`).on(table).columns(['organisation_id', 'id']).execute();
}
