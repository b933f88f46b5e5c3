// PostgreSQL only: `atrium_require(premise, what)`, true when the premise holds and an error (SQLSTATE AT001)
// when it does not. A statement that states a request's premise with it (the cached organisation is still as
// it was; an advisory lock is held) fails when the premise fails, and so aborts its transaction: it can then
// travel with the transaction's COMMIT (src/db/riders.ts), which commits only if it held, instead of being
// checked in JavaScript before the COMMIT is sent, a round trip later. SQLite needs none: it has no round trips.
import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../column-types.ts';

export async function up(db: Kysely<any>): Promise<void> {
  if (!isPostgres(db)) return;
  await sql`create or replace function atrium_require(premise boolean, what text) returns boolean language plpgsql as $$
    begin
      if premise is not true then
        raise exception 'the request''s premise no longer holds: %', what using errcode = 'AT001';
      end if;
      return true;
    end
  $$`.execute(db);
}
