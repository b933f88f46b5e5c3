// PostgreSQL through node-postgres with fewer round trips and fewer socket writes than Kysely's own driver,
// which checks a pooled connection out for every statement and waits for each answer before sending on.
// Each round trip costs the server process a write that wakes PostgreSQL (~30-40 µs of CPU on the benchmark
// machine), more than the statement itself; this driver cuts them five ways (measured in bench/README.md):
//
// 1. Plain reads share a connection. A SELECT outside a transaction (no locking clause, no WITH) goes to one of
//    a few long-lived connections in node-postgres's pipeline mode (shared-connections.ts), and every such read
//    issued in one turn of the event loop leaves in a single write, answered in order.
// 2. A transaction sends BEGIN together with its first statement, not as a round trip of its own.
// 3. A statement marked deferrable (prepared.ts: an outbox insert, whose result nobody reads; deferred-writes.ts:
//    a row's UPDATE or INSERT) travels with the transaction's next statement or its COMMIT; should it fail,
//    that statement or the COMMIT fails with its error (as the write's caller translated it) and the
//    transaction is rolled back, as if it had failed at once. A write that may fail on a constraint goes no
//    later than the release of its savepoint, so that its failure is that savepoint's.
// 4. A request's riders (riders.ts: the check of its organisation, its Idempotency-Key's lock) go in the same
//    write as the request's first statement, and their checks run before that statement's result is handed back.
// 5. A transaction folded into one statement (single-statement.ts: a plain PATCH, create or delete) needs no
//    connection of its own: it goes to a shared write connection, in one write with the others of its turn
//    (shared-connections.ts says what bounds a write's wait for the others there).
//
// Statements compiled by prepared.ts carry a name, so each connection parses them once.
// Everything else — other writes, locking reads, anything inside a transaction — runs on a connection of the
// pool (pg-pool.ts: bounded in time, destroyed when it failed), as with Kysely's driver. Errors are
// node-postgres's own, unchanged.
import net from 'node:net';
import pg from 'pg';
import {
  AbortedTransactionError,
  CompiledQuery,
  PostgresAdapter,
  PostgresDialect,
  SelectQueryNode,
  sql,
  type Kysely,
  type DatabaseConnection,
  type Driver,
  type PostgresPool,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import { hintsOf, STATEMENT_HINTS, type StatementHints } from './statement-hints.ts';
import type { RoundTripObserver } from './database-types.ts';
import { isPremiseFailure, riderWaitingBeforeCommit, takeRiders, type Rider } from './riders.ts';
import { foldStatement } from './single-statement.ts';
import { takeFinalOffer } from './final-statement.ts';
import { SharedConnections } from './shared-connections.ts';
import type { TransactionConnection, TransactionConnections } from './pg-transactions.ts';
import { isLockTimeout } from './errors.ts';

/**
 * A pooled connection (pg-pool.ts's wrapper, which passes node-postgres's query config through); its socket,
 * when it shows it, lets statements share a write.
 */
interface PoolClient {
  query(config: pg.QueryConfig): Promise<pg.QueryResult>;
  release(destroy?: boolean): void;
  stream?: net.Socket;
}
const checkOut = async (pool: PostgresPool) => (await pool.connect()) as unknown as PoolClient;

export interface PipelinedPostgresOptions {
  /** Told about each shared read connection that failed, as the pool tells about its own. */
  onConnectionError?: (err: Error) => void;
  /**
   * Told about each round trip: a socket write whose answer the caller then waits for, with the statements it
   * carries (the round-trip test counts them per request). Called in the caller's async context; unset, it
   * costs one comparison per write.
   */
  onRoundTrip?: RoundTripObserver;
}

export type { RoundTripObserver };

/**
 * A transaction's final statement (final-statement.ts) is built per request, not compiled once (prepared.ts), but
 * its text repeats: one per resource kind and set of fields written. Unnamed, PostgreSQL parsed and planned it
 * on every request, about 0.3 ms of its CPU a PATCH, half of what the PATCH costs it (bench/README.md); named by
 * its text, each connection parses it once. The names are kept for the process's life, so that one name always
 * stands for one text on every connection; past the bound, a new text goes unnamed, as before.
 */
const MAX_NAMED_TEXTS = 256;
const nameOfText = new Map<string, string>();
/** The hints of a statement named by its text that is not a final statement: a prepared read with its riders folded in. */
const BY_TEXT: StatementHints = { deferrable: false, byText: true };

function nameOf(query: CompiledQuery): string | undefined {
  const hints = hintsOf(query);
  if (hints?.name !== undefined || (hints?.final !== true && hints?.byText !== true)) return hints?.name;
  let name = nameOfText.get(query.sql);
  if (name === undefined && nameOfText.size < MAX_NAMED_TEXTS) nameOfText.set(query.sql, (name = `atrium_f${nameOfText.size + 1}`));
  return name;
}

function toConfig(query: CompiledQuery): pg.QueryConfig {
  const name = nameOf(query);
  return name ? { name, text: query.sql, values: query.parameters as unknown[] } : { text: query.sql, values: query.parameters as unknown[] };
}

/** A read's rows, as readDirect answers them. */
const rowsOf = (result: pg.QueryResult): unknown[] => result.rows;

function toResult<R>(result: pg.QueryResult): QueryResult<R> {
  const { command, rowCount, rows } = result;
  if (command === 'ROLLBACK' || command === 'COMMIT') return { rows: [{ command } as R] };
  const writes = command === 'INSERT' || command === 'UPDATE' || command === 'DELETE' || command === 'MERGE';
  return { numAffectedRows: writes ? BigInt(rowCount ?? 0) : undefined, rows: (rows ?? []) as R[] };
}

const COMMIT = CompiledQuery.raw('commit');

/** A SELECT that reads and nothing else: no locking clause, and no WITH (which could hide a write). */
function isPlainRead(query: CompiledQuery): boolean {
  const node = query.query;
  return SelectQueryNode.is(node) && node.with === undefined && (node.endModifiers === undefined || node.endModifiers.length === 0);
}

/** Submits queries on a pipelined connection in one socket write; settles once all have answered. */
async function sendTogether(client: PoolClient, queries: CompiledQuery[]): Promise<Array<PromiseSettledResult<pg.QueryResult>>> {
  const stream = client.stream;
  stream?.cork();
  let pending: Array<Promise<pg.QueryResult>>;
  try {
    pending = queries.map((q) => client.query(toConfig(q)));
  } finally {
    stream?.uncork();
  }
  return Promise.allSettled(pending);
}

/**
 * Hands each rider its answer (`answers`, in the riders' order) and waits for their checks; throws the first
 * that fails: the request must start over (or answer as that rider says).
 */
async function checkRiders(riders: Rider[], answers: Array<PromiseSettledResult<pg.QueryResult>>): Promise<void> {
  riders.forEach((rider, i) => {
    const answer = answers[i];
    rider.settle(answer.status === 'fulfilled' ? answer.value.rows : (answer.reason as Error));
  });
  for (const rider of riders) await rider.outcome;
}

/** `query` with `tail` and the riders folded in (single-statement.ts), if every rider names its premise (riders.ts). */
function foldWithRiders(query: CompiledQuery, tail: CompiledQuery[], riders: Rider[]): CompiledQuery | undefined {
  return riders.every((r) => r.premise !== undefined) ? foldStatement(query, tail, riders.map((r) => r.query)) : undefined;
}

/** Folded riders whose statement succeeded: their premises held (their checks read no row). */
function passed(riders: Rider[]): void {
  for (const rider of riders) rider.settle([]);
}

/**
 * What Kysely sees as a connection: it decides per statement where the statement runs. Outside a transaction
 * a plain read goes to a shared reader, anything else to a pooled connection for that statement alone; inside
 * one, every statement goes to the transaction's pooled connection, checked out at its first statement.
 */
class RoutedConnection implements TransactionConnection {
  readonly #driver: PipelinedPostgresDriver;
  #client: PoolClient | undefined;
  /** BEGIN, not yet sent: it goes with the transaction's first statement. */
  #begin: CompiledQuery | undefined;
  #inTransaction = false;
  #deferred: CompiledQuery[] = [];
  #broken = false;
  /** The transaction's COMMIT went with its final statement (final-statement.ts): it is over. */
  #finished = false;

  constructor(driver: PipelinedPostgresDriver) {
    this.#driver = driver;
  }

  executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    // A transaction's final statement, where its caller offered one (every plain PATCH, create and delete): its
    // answer is handed on as it comes, not awaited inside an async function that makes a promise of its own.
    if (this.#inTransaction && !this.#finished) {
      try {
        const final = this.#sendAsFinal(query);
        if (final !== undefined) return final.then((result) => toResult<R>(result));
      } catch (err) {
        return Promise.reject(err);
      }
    }
    return this.#execute(query);
  }

  /**
   * `query` with the COMMIT, when it says why its transaction must not commit and its caller offered it (see
   * final-statement.ts); undefined, nothing sent, otherwise.
   */
  #sendAsFinal(query: CompiledQuery): Promise<pg.QueryResult> | undefined {
    if (hintsOf(query)?.final !== true || riderWaitingBeforeCommit()) return undefined;
    const offer = takeFinalOffer();
    if (offer === undefined) return undefined;
    const tail = offer.tail(offer.created);
    return this.#sendFolded(query, tail) ?? this.#sendFinal(query, [...tail, COMMIT]);
  }

  #execute<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#inTransaction && isPlainRead(query)) return this.readOutside(query, toResult<R>);
    return this.#executeOther(query);
  }

  /**
   * A plain read outside a transaction, `answer` made of its result, with the riders waiting in its context folded
   * into it where they can be (#readFolded), else sent beside it in the same write. Not async: the read's answer is
   * handed on in one step (readDirect takes its rows there), where async layers made a promise each.
   */
  readOutside<T>(query: CompiledQuery, answer: (result: pg.QueryResult) => T): Promise<T> {
    try {
      const riders = takeRiders(false);
      if (riders === undefined) return this.#driver.read(query).then(answer);
      return this.#readFolded(query, riders, answer) ?? this.#readBeside(query, riders).then(answer);
    } catch (err) {
      // Whatever fails before anything is sent fails the statement, as it would in an async function.
      return Promise.reject(err);
    }
  }

  /** The riders and the read leave in the same write, on the same shared connection; the riders' checks first. */
  async #readBeside(query: CompiledQuery, riders: Rider[]): Promise<pg.QueryResult> {
    const settled = await Promise.allSettled(this.#driver.readTogether([...riders.map((r) => r.query), query]));
    await checkRiders(riders, settled);
    const read = settled[settled.length - 1];
    if (read.status === 'rejected') throw read.reason;
    return read.value;
  }

  async #executeOther<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    if (!this.#inTransaction) {
      const riders = takeRiders(false);
      // A write outside a transaction cannot be undone: its riders' checks must pass before it is sent.
      if (riders) await checkRiders(riders, await Promise.allSettled(this.#driver.readTogether(riders.map((r) => r.query))));
      return toResult(await this.#driver.sendAlone(query));
    }
    if (this.#finished) throw new Error('a statement was sent after its transaction\'s final statement (final-statement.ts)');
    const hints = hintsOf(query);
    // A savepoint's release waits for nothing, unless a write that may fail on a constraint is still to be
    // sent: its failure must be this savepoint's (deferred-writes.ts).
    if (hints?.deferrable && !(hints.releasesSavepoint && this.#deferred.some((q) => hintsOf(q)?.mayFail))) {
      this.#deferred.push(query);
      return { rows: [] };
    }
    const results = await this.#send(query);
    return toResult(results[results.length - 1]);
  }

  /**
   * A prepared read (prepared.ts: named, so its shapes are few) with the request's riders folded into it, one
   * statement instead of one each (single-statement.ts), `answer` made of its result; undefined, nothing sent, when
   * they cannot be folded. Rejects with the rider's refusal when its premise failed; any other failure leaves the
   * riders to be sent again.
   */
  #readFolded<T>(query: CompiledQuery, riders: Rider[], answer: (result: pg.QueryResult) => T): Promise<T> | undefined {
    const folded = hintsOf(query)?.name !== undefined ? foldWithRiders(query, [], riders) : undefined;
    if (folded === undefined) return undefined;
    return this.#driver.read({ ...folded, [STATEMENT_HINTS]: BY_TEXT } as CompiledQuery).then(
      (result) => {
        passed(riders);
        return answer(result);
      },
      (err: unknown) =>
        this.#riderRefusal(err, riders).then((refusal) => {
          throw refusal;
        }),
    );
  }

  /**
   * What a folded statement's failure means: the refusal of the rider whose premise it names (atrium_require's
   * message, "…: tenancy"), or the failure itself, the other riders untaken, unchecked, to go again.
   */
  async #riderRefusal(err: unknown, riders: Rider[]): Promise<unknown> {
    const message = String((err as { message?: unknown }).message);
    const rider = isPremiseFailure(err) ? riders.find((r) => message.endsWith(`: ${r.premise}`)) : undefined;
    for (const r of riders) if (r !== rider) r.taken = false;
    if (rider === undefined) return err;
    rider.settle(err as Error);
    return rider.outcome.then(() => err, (refusal: unknown) => refusal);
  }

  /**
   * The transaction as one statement (single-statement.ts): `query`, its tail and the request's riders folded
   * together, sent without BEGIN or COMMIT on a shared writer (writeAlone), when nothing of the transaction was sent yet and every rider waiting
   * may be folded; undefined (nothing sent, no rider taken) otherwise. Throws as #sendFinal does, and a rider's
   * own refusal when it is the rider's premise that failed.
   */
  #sendFolded(query: CompiledQuery, tail: CompiledQuery[]): Promise<pg.QueryResult> | undefined {
    if (this.#begin?.sql !== 'begin' || this.#deferred.length > 0 || this.#client !== undefined) return undefined;
    const riders = takeRiders(true) ?? [];
    const folded = foldWithRiders(query, tail, riders);
    if (folded === undefined) {
      for (const rider of riders) rider.taken = false;
      return undefined;
    }
    this.#begin = undefined;
    this.#finished = true;
    // Refused as outdated by a migration (outdated-plans.ts), it did nothing: it runs again on a new connection, or
    // its caller runs the request's transaction again (againIfPlansOutdated), riders and all. Not an async
    // function: the write's answer is handed on as it comes, one promise fewer on every PATCH.
    return this.#driver.writeAlone({ ...folded, [STATEMENT_HINTS]: hintsOf(query) } as CompiledQuery).then(
      (result) => {
        passed(riders);
        return result;
      },
      (err: unknown) => this.#foldedFailure(err, query, riders),
    );
  }

  /**
   * Why a folded statement failed, thrown: a rider's refusal, or the write's own failure as its caller translates
   * it (the full path then sends the riders with its first statement).
   */
  async #foldedFailure(err: unknown, query: CompiledQuery, riders: Rider[]): Promise<never> {
    const failure = await this.#riderRefusal(err, riders);
    if (failure !== err) throw failure;
    const translate = hintsOf(query)?.translate;
    throw translate ? translate(err) : err;
  }

  /**
   * `query` and, after it, `after` (which ends with COMMIT), in one write: the transaction is over whatever
   * they answer. Answers `query`'s result; throws the first failure, or AbortedTransactionError if the COMMIT
   * rolled back.
   */
  async #sendFinal(query: CompiledQuery, after: CompiledQuery[]): Promise<pg.QueryResult> {
    this.#finished = true;
    const results = await this.#send(query, after);
    if (results[results.length - 1].command === 'ROLLBACK') throw new AbortedTransactionError();
    return results[results.length - 1 - after.length];
  }

  /**
   * Sends the pending BEGIN, the request's rider (riders.ts) and the deferred statements, then `query` and
   * `after`, in one write on the transaction's connection; throws the first error, or the rider's check's.
   */
  async #send(query: CompiledQuery, after: CompiledQuery[] = []): Promise<pg.QueryResult[]> {
    // Checked out first: a rider is taken only when it will be sent, so that its check always runs.
    this.#client ??= await checkOut(this.#driver.pool);
    const riders = takeRiders(true) ?? [];
    const queries = [...(this.#begin ? [this.#begin] : []), ...riders.map((r) => r.query), ...this.#deferred, query, ...after];
    const ridersAt = this.#begin ? 1 : 0;
    this.#begin = undefined;
    this.#deferred = [];
    this.#driver.onRoundTrip?.(queries.map((q) => q.sql));
    const settled = await sendTogether(this.#client, queries);
    const failedAt = settled.findIndex((s) => s.status === 'rejected');
    const failure = failedAt === -1 ? undefined : ((settled[failedAt] as PromiseRejectedResult).reason as { code?: unknown });
    // A connection-level failure (no SQLSTATE) leaves the connection unusable: the pool must not reuse it.
    if (failure && typeof failure.code !== 'string') this.#broken = true;
    if (riders.length > 0) await checkRiders(riders, settled.slice(ridersAt, ridersAt + riders.length));
    if (failure) {
      // A deferred write's failure reads as its caller said it should (a unique key taken: a 409).
      const translate = hintsOf(queries[failedAt])?.translate;
      throw translate ? translate(failure) : failure;
    }
    return settled.map((s) => (s as PromiseFulfilledResult<pg.QueryResult>).value);
  }

  begin(settings: TransactionSettings): void {
    let text = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      text = 'start transaction';
      if (settings.isolationLevel) text += ` isolation level ${settings.isolationLevel}`;
      if (settings.accessMode) text += ` ${settings.accessMode}`;
    }
    this.#inTransaction = true;
    this.#begin = CompiledQuery.raw(text);
    this.#deferred = [];
  }

  commit(): Promise<void> {
    // Committed already, with its final statement: nothing to wait for.
    if (this.#finished) {
      this.#endTransaction();
      return Promise.resolve();
    }
    return this.#commit();
  }

  async #commit(): Promise<void> {
    try {
      // Nothing was ever sent: there is no transaction on the server to end.
      if (this.#begin && this.#deferred.length === 0) return;
      // The rider's check must pass before anything commits: it goes first, and a failure rolls back. An atomic
      // rider (riders.ts) goes with the COMMIT itself: its failure aborts the transaction.
      if (riderWaitingBeforeCommit()) await this.#send(CompiledQuery.raw('select 1'));
      const results = await this.#send(COMMIT);
      // PostgreSQL completes COMMIT with a ROLLBACK tag if an earlier statement left the transaction aborted.
      if (results[results.length - 1].command === 'ROLLBACK') throw new AbortedTransactionError();
    } finally {
      this.#endTransaction();
    }
  }

  async rollback(): Promise<void> {
    // Nothing was sent, or the COMMIT that went with a final statement has ended the transaction already.
    const sent = this.#begin === undefined && !this.#finished;
    this.#endTransaction();
    if (!sent || !this.#client) return;
    try {
      this.#driver.onRoundTrip?.(['rollback']);
      await this.#client.query(toConfig(CompiledQuery.raw('rollback')));
    } catch (err) {
      this.#broken = true;
      throw err;
    }
  }

  #endTransaction(): void {
    this.#inTransaction = false;
    this.#finished = false;
    this.#begin = undefined;
    this.#deferred = [];
  }

  release(): void {
    const client = this.#client;
    this.#client = undefined;
    this.#endTransaction();
    if (client) client.release(this.#broken);
    this.#broken = false;
  }

  // Kysely calls this only for `.stream()`, which nothing here uses.
  async *streamQuery(): AsyncIterableIterator<QueryResult<never>> {
    throw new Error('streaming queries are not supported by this driver');
  }
}

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

class PipelinedPostgresDriver implements TransactionConnections {
  readonly pool: PostgresPool;
  readonly onRoundTrip: RoundTripObserver | undefined;
  readonly #shared: SharedConnections;
  /** Released connection objects, reused: Kysely asks for one per statement outside transactions. */
  readonly #idle: RoutedConnection[] = [];
  /**
   * Connection objects of transactions (pg-transactions.ts), kept apart from Kysely's: Kysely wraps the
   * `executeQuery` of each connection object it lends with its query log, which those transactions keep themselves.
   */
  readonly #idleForTransactions: RoutedConnection[] = [];
  /** Never in a transaction, so it keeps no state between statements: every direct read goes through it at once. */
  readonly #outside = new RoutedConnection(this);

  constructor(pool: PostgresPool & { options: pg.PoolConfig }, options: PipelinedPostgresOptions) {
    this.pool = pool;
    this.onRoundTrip = options.onRoundTrip;
    // The pool's own settings (server, schema, type parsers, timeouts, keep-alive) apply to the shared connections too.
    this.#shared = new SharedConnections(pool.options, { toConfig, onConnectionError: options.onConnectionError ?? (() => {}), onRoundTrip: options.onRoundTrip });
  }

  /** Reads on one shared connection, so that they leave in the same write. */
  readTogether(queries: CompiledQuery[]): Array<Promise<pg.QueryResult>> {
    const reader = this.#shared.reader();
    return queries.map((q) => reader.query(q));
  }

  read(query: CompiledQuery): Promise<pg.QueryResult> {
    return this.#shared.reader().query(query);
  }

  /**
   * A prepared statement on the root database (prepared.ts, through direct-statements.ts), if it is a plain read:
   * its rows, sent as a connection outside a transaction sends it (shared reader, riders folded in), without
   * Kysely's executor around it. That executor lends and takes back a connection object and runs the result
   * through its plugins (there are none) in about fifteen promises, a third of a read's on PostgreSQL.
   */
  readDirect(query: CompiledQuery): Promise<unknown[]> | undefined {
    if (!isPlainRead(query)) return undefined;
    return this.#outside.readOutside(query, rowsOf);
  }

  /**
   * A write that is a whole transaction in one statement (single-statement.ts), counted as one round trip: on a
   * shared writer, in one socket write with the others of its turn; on a pooled connection of its own when no
   * writer has room, or when it waited on a writer for a lock longer than a writer allows (it did nothing there)
   * and so runs again there, a second round trip. Other writes outside a transaction keep a pooled connection
   * (sendAlone): nothing bounds how long they run (a clean-up's delete), and the writes behind them would wait.
   */
  writeAlone(query: CompiledQuery): Promise<pg.QueryResult> {
    const writer = this.#shared.writer();
    if (writer === undefined) return this.sendAlone(query);
    this.onRoundTrip?.([query.sql]);
    return writer.query(query).catch((err: unknown) => {
      if (!isLockTimeout(err)) throw err;
      return this.sendAlone(query);
    });
  }

  /** One statement on a pooled connection of its own, one round trip. */
  async sendAlone(query: CompiledQuery): Promise<pg.QueryResult> {
    const client = await checkOut(this.pool);
    let broken = false;
    try {
      this.onRoundTrip?.([query.sql]);
      return await client.query(toConfig(query));
    } catch (err) {
      // A connection-level failure (no SQLSTATE) leaves the connection unusable: the pool must not reuse it.
      broken = typeof (err as { code?: unknown }).code !== 'string';
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    return this.#idle.pop() ?? new RoutedConnection(this);
  }

  /** A connection object for a transaction of pg-transactions.ts, at once; nothing is checked out until it sends. */
  lend(): RoutedConnection {
    return this.#idleForTransactions.pop() ?? new RoutedConnection(this);
  }

  takeBack(connection: RoutedConnection): void {
    connection.release();
    if (this.#idleForTransactions.length < 64) this.#idleForTransactions.push(connection);
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    (connection as RoutedConnection).begin(settings);
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).commit();
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await (connection as RoutedConnection).rollback();
  }

  async savepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`savepoint ${quoted(name)}`));
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`rollback to savepoint ${quoted(name)}`));
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw(`release savepoint ${quoted(name)}`));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as RoutedConnection).release();
    if (this.#idle.length < 64) this.#idle.push(connection as RoutedConnection);
  }

  async destroy(): Promise<void> {
    await this.#shared.end();
    await this.pool.end();
  }
}

/** Kysely's migration lock (its key, so that a process of an older release still excludes this one). */
const MIGRATION_LOCK = BigInt('3853314791062309107');

/**
 * Kysely's PostgreSQL adapter with its migration lock held by a transaction: migrate.ts runs the migrations inside
 * one transaction, and a lock that ends with it is released however it ends. Kysely's own is a session lock,
 * released by a statement after the migrations: when one failed, that statement was refused in the aborted
 * transaction (its "current transaction is aborted" hid the migration's own error) and the connection went back to
 * the pool still holding the lock, so that every other process starting on the database waited for it.
 */
class TransactionLockedAdapter extends PostgresAdapter {
  override async acquireMigrationLock(db: Kysely<any>): Promise<void> {
    await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK)})`.execute(db);
  }

  override async releaseMigrationLock(): Promise<void> {}
}

/** Kysely's PostgreSQL dialect (compiler, adapter, introspection) over the driver above. */
export class PipelinedPostgresDialect extends PostgresDialect {
  readonly #pool: PostgresPool & { options: pg.PoolConfig };
  readonly #options: PipelinedPostgresOptions;

  /** `pool` as pg-pool.ts makes it: its connections created in pipeline mode. */
  constructor(pool: PostgresPool & { options: pg.PoolConfig }, options: PipelinedPostgresOptions = {}) {
    super({ pool });
    this.#pool = pool;
    this.#options = options;
  }

  /** The driver Kysely made from this dialect (it makes one, when the Kysely instance is made). */
  driver: PipelinedPostgresDriver | undefined;

  override createDriver(): Driver {
    return (this.driver = new PipelinedPostgresDriver(this.#pool, this.#options));
  }

  override createAdapter(): PostgresAdapter {
    return new TransactionLockedAdapter();
  }
}
