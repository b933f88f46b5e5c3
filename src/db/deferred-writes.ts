// A write whose result its caller never reads (an UPDATE of a row the request has already read, an INSERT of a
// row it built): inside a transaction on PostgreSQL it travels with the transaction's next statement or its
// COMMIT (postgres-driver.ts) instead of costing a round trip of its own. Its failure then surfaces there, as
// `translate` says it (a unique key taken: a 409), and rolls the transaction back, as if it had failed at once;
// inside a savepoint it is sent before the savepoint is released, so a failure stays that savepoint's. On SQLite
// (and outside a transaction) it runs at once and fails at once, translated alike.
import { sql, type Compilable, type RawBuilder } from 'kysely';
import { isPostgres } from './column-types.ts';
import { isPremiseFailure } from './riders.ts';
import type { Db } from './database-types.ts';
import { STATEMENT_HINTS, type StatementHints } from './statement-hints.ts';
import { statementRows } from './direct-statements.ts';

export type FailureTranslation = (err: unknown) => unknown;

const plainHints: StatementHints = { deferrable: true, mayFail: true };

export async function deferredWrite(db: Db, write: Compilable, translate?: FailureTranslation): Promise<void> {
  const hints: StatementHints = translate ? { deferrable: true, mayFail: true, translate } : plainHints;
  const query = { ...write.compile(), [STATEMENT_HINTS]: hints };
  try {
    const done = statementRows(db, query, false);
    if (done instanceof Promise) await done;
  } catch (err) {
    throw translate ? translate(err) : err;
  }
}

/**
 * A premise the transaction's writes depend on (no other live row has this URL), checked where it costs no
 * round trip: on PostgreSQL a statement that fails (atrium_require) when `premise` is false, deferred as a
 * write is, so that it travels with the next statement or the COMMIT and rolls the transaction back; on SQLite
 * read at once. Either way a premise that does not hold throws `refusal()`, and nothing of the transaction stays.
 */
export async function requirePremise(db: Db, premise: RawBuilder<boolean>, what: string, refusal: () => Error): Promise<void> {
  if (!isPostgres(db)) {
    const found = await sql<{ held: unknown }>`select ${premise} as held`.execute(db);
    if (!found.rows[0]?.held) throw refusal();
    return;
  }
  const check = sql`select atrium_require(${premise}, ${what}::text)`;
  await deferredWrite(db, { compile: () => check.compile(db) }, (err) => (isPremiseFailure(err) ? refusal() : err));
}
