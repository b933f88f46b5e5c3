// The organisation's audit log (docs/audit-log.md): one row per change of state and per write refused with 403.
// Rows are only ever inserted, and deleted by the retention job. Every audited write adds a row, and on SQLite
// each b-tree it touches is one more page the commit writes to the write-ahead log (and later checkpoints): with
// a primary key, an organisation index and two filter indexes the spread PATCH cost 30 % more server CPU
// (bench/README.md). So the table is one b-tree, keyed (organisation_id, id): ids are UUIDv7s of the entry's
// time, so an organisation's entries lie in order of time, a page newest first is a range of the key, and
// `since`/`until` bound that range. The other filters (actor, target, action, outcome) narrow it. The retention
// job deletes by key range, organisation by organisation.
// No foreign keys: an entry must outlive what it names (a deleted key, a removed person), and an insert on
// every write should not pay for checking them.
import { sql, type Kysely } from 'kysely';
import { columnTypes, isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('audit_events')
    .addColumn('id', t.uuid, (c) => c.notNull())
    .addColumn('organisation_id', t.uuid, (c) => c.notNull())
    .addColumn('occurred_at', t.timestamp, (c) => c.notNull())
    .addColumn('actor_type', 'text', (c) => c.notNull())
    .addColumn('actor_id', 'text')
    .addColumn('actor_name', 'text')
    .addColumn('credential_kind', 'text')
    .addColumn('credential_id', 'text')
    .addColumn('via', 'text', (c) => c.notNull())
    .addColumn('action', 'text', (c) => c.notNull())
    .addColumn('target_type', 'text')
    .addColumn('target_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text')
    .addColumn('ip', 'text')
    .addColumn('user_agent', 'text')
    // JSON array of field names, never their values.
    .addColumn('changed_fields', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('audit_events_pkey', ['organisation_id', 'id'])
    // SQLite: the rows live in the key's b-tree itself, not in a rowid table beside it.
    .$call((b) => (isPostgres(db) ? b : b.modifyEnd(sql`without rowid`)))
    .execute();
}
