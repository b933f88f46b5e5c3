// A write in one round trip on PostgreSQL: a transaction's final statement. A request that must wait for a
// statement's answer before it can send the COMMIT pays a second round trip for it; a statement that states in
// SQL why the transaction must not commit (atrium_require: no row was changed, and the request must take its
// full path) needs no such wait. Marked `final` (StatementHints), it is sent in one write with BEGIN, the
// request's riders, the statements deferred so far, the caller's tail (the request's audit entry) and COMMIT; the
// COMMIT commits only if it and everything before it succeeded.
//
// Only where the caller offered it (`offerFinalStatement`: a plain write, whose Idempotency-Key record would
// otherwise have to follow the answer) and only on PostgreSQL: elsewhere the statement runs as any other, and
// the transaction commits when its caller says. Once a final statement went, nothing else may be sent in its
// transaction; the caller then skips what its tail stood for.
//
// When the final statement's premise fails (FinalStatementRefused), its transaction is over, rolled back: the
// caller runs the request again without the offer, and the service its full path (which tells 404 from 409
// from "nothing to change").
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CompiledQuery, QueryResult } from 'kysely';
import type { Db } from './database-types.ts';
import { isPremiseFailure } from './riders.ts';
import { statementRows } from './direct-statements.ts';
import { STATEMENT_HINTS, type StatementHints } from './statement-hints.ts';
import { asPromise } from '../maybe-async.ts';

export interface FinalStatementOffer {
  /**
   * What goes after the final statement, before COMMIT: built only if a final statement is sent. `created`: the
   * id of the row the final statement creates, if it creates one (a create's audit entry names it).
   */
  readonly tail: (created: string | undefined) => CompiledQuery[];
  used: boolean;
  created?: string;
}

/** The final statement's premise did not hold: its transaction was rolled back, and nothing of it kept. */
export class FinalStatementRefused extends Error {
  constructor(options?: { cause: unknown }) {
    super('the final statement of the transaction was refused; run the request on its full path', options);
  }
}

const offers = new AsyncLocalStorage<FinalStatementOffer>();

/** Runs `work` (which opens a transaction) offering its statements to be its final one; `work` may ask the offer whether one was. */
export function offerFinalStatement<T>(tail: FinalStatementOffer['tail'], work: (offer: FinalStatementOffer) => Promise<T>): Promise<T> {
  const offer: FinalStatementOffer = { tail, used: false };
  return offers.run(offer, () => work(offer));
}

/** Whether a final statement would be taken here: a service then states its premise in SQL (see above). */
export function finalStatementOffered(): boolean {
  const offer = offers.getStore();
  return offer !== undefined && !offer.used;
}

/** For the driver: the offer, now used, if there is one. */
export function takeFinalOffer(): FinalStatementOffer | undefined {
  const offer = offers.getStore();
  if (offer === undefined || offer.used) return undefined;
  offer.used = true;
  return offer;
}

const finalHints: StatementHints = {
  deferrable: false,
  final: true,
  translate: (err) => (isPremiseFailure(err) ? new FinalStatementRefused({ cause: err }) : err),
};

/**
 * Runs `query` as its transaction's final statement where one was offered (as an ordinary statement where not):
 * `query` must fail with atrium_require when the transaction must not commit; that failure is thrown as
 * FinalStatementRefused. `created`: the id of the row `query` creates, if it creates one (the offer's tail names it).
 */
export function runFinalStatement<R>(db: Db, query: CompiledQuery<R>, created?: string): Promise<QueryResult<R>> {
  if (created !== undefined && finalStatementOffered()) offers.getStore()!.created = created;
  // To the transaction's connection without Kysely's executor where its runner takes it (direct-statements.ts);
  // a statement of a SQLite transaction runs at once, and may fail at once: a rejection all the same.
  return asPromise(() => statementRows(db, { ...query, [STATEMENT_HINTS]: finalHints } as CompiledQuery, false)).then((rows) => ({ rows: rows as R[] }));
}
