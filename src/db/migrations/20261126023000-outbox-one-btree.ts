// The outbox takes an insert on every write, and on SQLite every b-tree it has is pages that each write's commit
// puts in the write-ahead log (bench/README.md, "SQLite writes that share a commit"). Two of its four were read
// by nothing: `outbox_events_org` (no query selects events by organisation; tests scan their few rows) and, on
// SQLite, the rowid table beside the primary key's index. Now the rows live in the primary key's b-tree itself
// (ids are UUIDv7s, so new events append at its end), and `outbox_events_pending` serves the dispatcher's scan
// of what is not yet fanned out and the backlog gauge. PostgreSQL keeps its heap and primary key; it loses the
// unread index.
import { sql, type Kysely } from 'kysely';
import { columnTypes, isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (isPostgres(db)) {
    await db.schema.dropIndex('outbox_events_org').execute();
    return;
  }
  const t = columnTypes(db);
  // SQLite cannot turn a rowid table into one without: rebuild it, in one transaction, so that a process stopped
  // half-way leaves the old table as it was.
  await db.transaction().execute(async (tx) => {
    await tx.schema
      .createTable('outbox_events_rebuilt')
      .addColumn('id', t.uuid, (c) => c.primaryKey().notNull())
      .addColumn('organisation_id', t.uuid, (c) => c.notNull().references('organisations.id'))
      .addColumn('type', 'text', (c) => c.notNull())
      .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
      .addColumn('data', 'text', (c) => c.notNull())
      .addColumn('dispatched_at', t.timestamp)
      .modifyEnd(sql`without rowid`)
      .execute();
    await sql`insert into outbox_events_rebuilt (id, organisation_id, type, occurred_at, data, dispatched_at)
      select id, organisation_id, type, occurred_at, data, dispatched_at from outbox_events`.execute(tx);
    await tx.schema.dropTable('outbox_events').execute();
    await tx.schema.alterTable('outbox_events_rebuilt').renameTo('outbox_events').execute();
    await tx.schema.createIndex('outbox_events_pending').on('outbox_events').columns(['dispatched_at', 'id']).execute();
  });
}
