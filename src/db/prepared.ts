// Hot, fixed-shape queries compiled once per dialect and then run with new parameters. Kysely builds and
// compiles a query on every call (tens of microseconds for a join); on the request path that costs more than
// the query itself (measured in bench/: the API-key join took 61 µs through the builder, 15 µs precompiled).
// On PostgreSQL each is also a named prepared statement (parsed once per connection; see postgres-driver.ts).
//
// The query is built once with sentinel strings in place of the arguments, so a build must pass each argument
// straight to Kysely as a value (never branch on it, never transform it). Any value may then take its place at
// run time: a string, a number, a boolean, bytes, or null.
import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './database.ts';
import { STATEMENT_HINTS, type StatementHints } from './statement-hints.ts';
import { directStatements, statementRows } from './direct-statements.ts';
import { sentinel, slotOf } from './sentinels.ts';
import { asPromise, type MaybeAsync } from '../maybe-async.ts';

export type PreparedArgument = string | number | boolean | Uint8Array | null;

export interface PreparedOptions {
  /**
   * The caller never looks at the result: inside a transaction on PostgreSQL the statement may then travel with
   * the transaction's next statement or its COMMIT instead of costing a round trip of its own; its failure
   * surfaces there (and rolls the transaction back). For writes such as the outbox event of a change.
   */
  deferrable?: boolean;
  /**
   * A read whose rows the requests of one turn of the event loop may share on SQLite (they read one snapshot:
   * sqlite-adapter.ts, readInTurn): it runs once a turn for the same arguments. The rows are the same objects
   * for every caller, so none may change them. Ignored elsewhere (PostgreSQL, a transaction).
   */
  sharedInTurn?: boolean;
}

let statements = 0;

export interface PreparedQuery<Args extends PreparedArgument[], Row> {
  (db: Db, ...args: Args): Promise<Row[]>;
  /**
   * The rows at once where the database answers at once (a read on SQLite's idle connection), else their
   * promise; a failure may be thrown at once. For the layers of a read that stay synchronous while nothing
   * waits (src/maybe-async.ts).
   */
  now(db: Db, ...args: Args): MaybeAsync<Row[]>;
  /**
   * For a write without RETURNING: how many rows it changed, at once where the database answers at once (a SQLite
   * transaction), else its promise; a failure may be thrown at once.
   */
  changes(db: Db, ...args: Args): MaybeAsync<number>;
  /** The statement with these arguments, to be sent by other means (a rider, riders.ts). */
  compile(db: Db, ...args: Args): CompiledQuery<Row>;
}

export function preparedQuery<Args extends PreparedArgument[], Row>(build: (db: Db, ...args: Args) => Compilable<Row>, options: PreparedOptions = {}): PreparedQuery<Args, Row> {
  const byAdapter = new Map<unknown, { compiled: CompiledQuery<Row>; slots: Array<number | undefined> | null; reads: boolean; hints: StatementHints }>();
  function entryFor(db: Db, args: Args) {
    const adapter = db.getExecutor().adapter.constructor;
    let entry = byAdapter.get(adapter);
    if (entry === undefined) {
      const sentinels = args.map((_, i) => sentinel(i)) as Args;
      const compiled = build(db, ...sentinels).compile();
      const slots = compiled.parameters.map(slotOf);
      const missing = args.findIndex((_, i) => !slots.includes(i));
      if (missing !== -1) throw new Error(`preparedQuery: argument ${missing} is not a parameter of the query it builds`);
      // The arguments in the query's own order, and nothing else (an insert's values): they are its parameters as given.
      const asGiven = slots.length === args.length && slots.every((slot, i) => slot === i);
      entry = { compiled, slots: asGiven ? null : slots, reads: compiled.query.kind === 'SelectQueryNode', hints: { name: `atrium_p${++statements}`, deferrable: options.deferrable === true, ...(options.sharedInTurn ? { sharedInTurn: true } : {}) } };
      byAdapter.set(adapter, entry);
    }
    return entry;
  }
  function bind(entry: ReturnType<typeof entryFor>, args: Args): CompiledQuery<Row> {
    const { compiled, slots, hints } = entry;
    const parameters = slots === null ? args : compiled.parameters.map((p, i) => (slots[i] === undefined ? p : args[slots[i]!]));
    return { ...compiled, parameters, [STATEMENT_HINTS]: hints } as CompiledQuery<Row>;
  }
  /**
   * The rows at once where the database answers at once (SQLite: a read on an idle connection, any statement of a
   * transaction), else their promise: on PostgreSQL a plain read's without Kysely's executor (direct-statements.ts),
   * anything else's through Kysely. A failure may be thrown at once.
   */
  function now(db: Db, ...args: Args): MaybeAsync<Row[]> {
    const entry = entryFor(db, args);
    const query = bind(entry, args);
    return statementRows(db, query, entry.reads) as MaybeAsync<Row[]>;
  }
  /** The rows' promise, a failure always a rejection (a caller may `.catch` it). */
  function run(db: Db, ...args: Args): Promise<Row[]> {
    return asPromise(() => now(db, ...args));
  }
  function changes(db: Db, ...args: Args): MaybeAsync<number> {
    const query = bind(entryFor(db, args), args);
    return directStatements.get(db)?.changes?.(query) ?? db.executeQuery(query).then((result) => Number(result.numAffectedRows ?? 0n));
  }
  run.now = now;
  run.changes = changes;
  run.compile = (db: Db, ...args: Args) => bind(entryFor(db, args), args);
  return run;
}
