// A recorded answer of some size (a bulk request's: 200 KB for 500 enrolments) is kept compressed, in a column of
// bytes beside the text one (src/http/idempotency.ts says when). On SQLite every byte a commit writes is written
// again and fsynced by the next checkpoint: storing a bulk resend's answer as text was a fifth of that request's
// time (bench/README.md, Roster-sync suite).
import type { Kysely } from 'kysely';
import { isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('idempotency_records').addColumn('response_body_packed', isPostgres(db) ? 'bytea' : 'blob').execute();
}
