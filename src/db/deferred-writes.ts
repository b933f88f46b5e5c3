// A write whose result its caller never reads (an UPDATE of a row the request has already read, an INSERT of a
// row it built): inside a transaction on PostgreSQL it travels with the transaction's next statement or its
// COMMIT (postgres-driver.ts) instead of costing a round trip of its own. Its failure then surfaces there, as
// `translate` says it (a unique key taken: a 409), and rolls the transaction back, as if it had failed at once;
// inside a savepoint it is sent before the savepoint is released, so a failure stays that savepoint's. On SQLite
// (and outside a transaction) it runs at once and fails at once, translated alike.
import type { Compilable } from 'kysely';
import type { Db } from './database-types.ts';
import { STATEMENT_HINTS, type StatementHints } from './statement-hints.ts';
import { directStatements } from './direct-statements.ts';

export type FailureTranslation = (err: unknown) => unknown;

const plainHints: StatementHints = { deferrable: true, mayFail: true };

export async function deferredWrite(db: Db, write: Compilable, translate?: FailureTranslation): Promise<void> {
  const hints: StatementHints = translate ? { deferrable: true, mayFail: true, translate } : plainHints;
  const query = { ...write.compile(), [STATEMENT_HINTS]: hints };
  try {
    if (directStatements.get(db)?.(query, false) === undefined) await db.executeQuery(query);
  } catch (err) {
    throw translate ? translate(err) : err;
  }
}
