// SQLite's transactions, grouped: the transactions asked for in the same turn of the event loop share one
// BEGIN and one COMMIT (docs/decisions.md#operating-it). A commit is most of what a small write costs on SQLite (its
// WAL frames and their writes, the locks), so ten PATCHes in one commit write about a quarter of the frames each.
//
// - While each turn brings more transactions (under load: other requests read from their sockets meanwhile), the
//   group waits another turn for them, up to GATHER_TURNS; one alone in its turn starts at the turn's end (#gather).
//
// - A body that fails is undone alone and its caller rejected at once; the others carry on. Bodies run without
//   savepoints: one that fails having changed nothing leaves nothing to undo; one that fails after a change undoes
//   the whole transaction, and the group runs again with a savepoint per body (#runGroup).
// - No caller is answered before the COMMIT that holds its changes has returned; if the COMMIT fails (disk full,
//   I/O), every caller of the group gets that error. So does every caller of a group whose transaction SQLite
//   rolled back by itself (it does on SQLITE_FULL and IOERR), since their changes went with it.
// - Bodies run one after another: a body is async and awaits between its statements, so two bodies cannot share
//   the one connection at once. A body's statements run on node:sqlite at once (direct-statements.ts; through
//   Kysely, they run without its queue), so a group of bodies that only touch the database runs in one go.
// - The group holds Kysely's connection lock from BEGIN to COMMIT, so queries through Kysely outside it wait
//   for the COMMIT, and reads that skip the queue (direct-statements.ts) see that a transaction is open and queue
//   too: nothing outside the group sees its uncommitted rows.
// - A body that arrives while a group runs joins it (up to MAX_MEMBERS); after that, the next group.
import { Kysely, SqliteAdapter, SqliteDialect, SqliteDriver, Transaction, type CompiledQuery, type DatabaseConnection, type Driver, type KyselyConfig, type QueryResult, type TransactionBuilder } from 'kysely';
import type { NodeSqliteDatabase } from './sqlite-adapter.ts';
import { directStatements, type DirectRunner } from './direct-statements.ts';
import type { Tables } from './tables.ts';
import type { MaybeAsync } from '../maybe-async.ts';

/** A transaction's body: its answer, at once when its statements answer at once (in-transaction.ts), else a promise. */
type Body = (tx: Kysely<Tables>) => MaybeAsync<unknown>;

export interface CommitStats {
  commits: number;
  transactions: number;
}

interface Member {
  body: Body;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** Bounds how long the first caller of a group waits for the others' bodies (and the group's transaction). */
const MAX_MEMBERS = 64;
const SAVEPOINT = 'atrium_group_member';
/** The most turns of the event loop a group waits for more bodies before it starts (#gather). */
const GATHER_TURNS = 4;

/**
 * Who holds the one connection: a group from BEGIN to COMMIT, or a query (or migration) through Kysely. In place of
 * Kysely's own lock for SQLite so that a group takes it at once when it is free, without Kysely's chain of promises.
 */
class ConnectionLock {
  #held = false;
  readonly #waiting: Array<() => void> = [];

  /** Takes it if it is free. */
  tryTake(): boolean {
    if (this.#held) return false;
    this.#held = true;
    return true;
  }

  take(): Promise<void> {
    if (this.tryTake()) return Promise.resolve();
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  /** Hands it to the next in line (first come, first served), or frees it. */
  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}

/** Kysely's SQLite dialect, its connection guarded by our lock rather than Kysely's. */
class LockedSqliteDialect extends SqliteDialect {
  readonly #config: ConstructorParameters<typeof SqliteDialect>[0];
  readonly #lock: ConnectionLock;

  constructor(config: ConstructorParameters<typeof SqliteDialect>[0], lock: ConnectionLock) {
    super(config);
    this.#config = config;
    this.#lock = lock;
  }

  override createAdapter(): SqliteAdapter {
    // Told it may use several connections, Kysely takes no lock of its own: the driver below takes ours.
    return new (class extends SqliteAdapter {
      override get supportsMultipleConnections(): boolean {
        return true;
      }
    })();
  }

  override createDriver(): SqliteDriver {
    const lock = this.#lock;
    return new (class extends SqliteDriver {
      override async acquireConnection() {
        await lock.take();
        return super.acquireConnection();
      }
      override async releaseConnection(): Promise<void> {
        lock.release();
      }
    })(this.#config);
  }
}

/** The one connection, lent to one body of the group for as long as it runs. */
class MemberConnection implements DatabaseConnection, DirectRunner {
  #open = true;
  readonly #sqlite: NodeSqliteDatabase;
  readonly #onQuery: ((query: CompiledQuery) => void) | undefined;

  constructor(sqlite: NodeSqliteDatabase, onQuery: ((query: CompiledQuery) => void) | undefined) {
    this.#sqlite = sqlite;
    this.#onQuery = onQuery;
  }

  close(): void {
    this.#open = false;
  }

  /**
   * Whether the body may have changed anything: a write that reported changed rows, a statement that returned rows
   * other than a SELECT (an UPDATE … RETURNING returns one per row changed), any other statement (DDL, a savepoint:
   * SQLite's count of changes says nothing about those). A statement that failed changed nothing: SQLite undoes it.
   */
  changed = false;

  /** The statement's rows, at once (direct-statements.ts: prepared queries and savepoints skip Kysely here). */
  rows(query: CompiledQuery): unknown[] {
    return this.run(query).rows;
  }

  /** A write's count of changed rows, at once. */
  changes(query: CompiledQuery): number {
    return Number(this.run(query).changes ?? 0);
  }

  /** Runs the statement now; its rows, or none for a write without RETURNING. */
  run(query: CompiledQuery): { rows: unknown[]; changes?: number | bigint; lastInsertRowid?: number | bigint } {
    // A statement left running after its body returned would land in another body's transaction.
    if (!this.#open) throw new Error('statement run after its transaction ended (a query not awaited inside db.transaction()?)');
    this.#onQuery?.(query);
    const statement = this.#sqlite.prepare(query.sql);
    if (statement.reader) {
      const rows = statement.all(query.parameters);
      if (rows.length > 0 && !statement.select) this.changed = true;
      return { rows };
    }
    const { changes, lastInsertRowid } = statement.run(query.parameters);
    if (Number(changes) > 0 || !statement.rowWrite) this.changed = true;
    return { rows: [], changes, lastInsertRowid };
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const { rows, changes, lastInsertRowid } = this.run(query);
    if (changes === undefined) return { rows: rows as R[] };
    return { rows: rows as R[], numAffectedRows: BigInt(changes), insertId: lastInsertRowid == null ? undefined : BigInt(lastInsertRowid) };
  }

  // eslint-disable-next-line require-yield -- no statement of ours streams
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported inside a SQLite transaction');
  }
}

export class SqliteGroupCommit {
  readonly #sqlite: NodeSqliteDatabase;
  readonly #db: Kysely<Tables>;
  readonly #lock: ConnectionLock;
  readonly #config: KyselyConfig;
  readonly #onQuery: ((query: CompiledQuery) => void) | undefined;
  // What a Transaction is built with; it serves only destroy() and transaction(), which a Transaction refuses.
  readonly #driver: Driver;
  readonly #queue: Member[] = [];
  #pending = false;
  /** How many bodies were queued when the next group last looked, and how many turns it has waited for more (#gather). */
  #gathered = 0;
  #turnsWaited = 0;
  #closed = false;
  /** Counted as they commit: how many transactions the commits carried (tests, and an operator's curiosity). */
  readonly stats: CommitStats = { commits: 0, transactions: 0 };

  constructor(sqlite: NodeSqliteDatabase, db: Kysely<Tables>, lock: ConnectionLock, config: KyselyConfig, onQuery?: (query: CompiledQuery) => void) {
    this.#sqlite = sqlite;
    this.#db = db;
    this.#lock = lock;
    this.#config = config;
    this.#onQuery = onQuery;
    this.#driver = config.dialect.createDriver();
  }

  /** What `db.transaction()` answers on SQLite: its `execute` joins a group. */
  builder(): TransactionBuilder<Tables> {
    const builder = {
      execute: <T>(body: (tx: Kysely<Tables>) => Promise<T>): Promise<T> => this.run(body),
      // A SQLite transaction is serializable whatever is asked; Kysely's own SQLite driver ignores both too.
      setIsolationLevel: () => builder,
      setAccessMode: () => builder,
    };
    return builder as unknown as TransactionBuilder<Tables>;
  }

  run<T>(body: (tx: Kysely<Tables>) => MaybeAsync<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ body, resolve: resolve as (value: unknown) => void, reject });
      this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#pending) return;
    this.#pending = true;
    this.#gathered = this.#queue.length;
    this.#turnsWaited = 0;
    // After the I/O of this turn: every request read in it has queued its body by then.
    setImmediate(this.#gather);
  }

  /**
   * The group starts once a turn of the event loop brings it no new body: while each turn's I/O brings more (other
   * requests' writes, read from their sockets meanwhile), it waits one more turn, up to GATHER_TURNS. A write that
   * arrives alone starts at the end of its turn, as it would with no waiting; under load, a commit carries more
   * writes, and each pays less of its cost.
   */
  readonly #gather = () => {
    if (this.#queue.length > this.#gathered && this.#turnsWaited < GATHER_TURNS) {
      this.#gathered = this.#queue.length;
      this.#turnsWaited++;
      setImmediate(this.#gather);
      return;
    }
    void this.#start();
  };

  async #start(): Promise<void> {
    if (!this.#lock.tryTake()) await this.#lock.take();
    try {
      if (this.#closed) throw new Error('the database is closed');
      await this.#runGroup();
    } catch (err) {
      // Nobody queued can be served (the database was closed).
      for (const member of this.#queue.splice(0)) member.reject(err);
    } finally {
      this.#lock.release();
    }
    this.#pending = false;
    if (this.#queue.length > 0) this.#schedule();
  }

  close(): void {
    this.#closed = true;
  }

  /** One of the group's own statements (compiled once, cached by the adapter); not reported to onQuery. */
  #exec(sql: string): void {
    this.#sqlite.prepare(sql).run([]);
  }

  /** The group's transaction begun; false, with the `members` next in line rejected, when it cannot be. */
  #begin(members: number): boolean {
    try {
      // IMMEDIATE: the write lock is taken here, waiting for another process's writer (busy_timeout), rather than
      // at a body's first write, where a snapshot grown stale meanwhile would fail every body after it.
      this.#exec('begin immediate');
      return true;
    } catch (err) {
      for (const member of this.#queue.splice(0, members)) member.reject(err);
      return false;
    }
  }

  async #runGroup(): Promise<void> {
    if (!this.#begin(MAX_MEMBERS)) return;
    const done: Array<{ member: Member; result: unknown }> = [];
    let taken = 0;
    // Bodies run without savepoints until one fails having changed something; the group then runs again, each body
    // after the first in a savepoint. A savepoint costs its two statements and a copy of every page the body changes
    // (SQLite's sub-journal): a PATCH's transaction with its audit entry, ten at a time in process, 26 µs of CPU
    // with one each, 23.5 without (bench/README.md). Most failures change nothing (a 404, a 409 found by a read or a
    // refused INSERT, which SQLite undoes by itself), so they need none; a failure after a write is the rare one
    // that costs the group its first run. A body may therefore run twice: as every transaction body already may
    // (db/outdated-plans.ts runs a transaction again whole), it does nothing but its statements that must not be
    // done twice.
    let guarded = false;
    while (this.#queue.length > 0 && taken < MAX_MEMBERS) {
      const member = this.#queue.shift()!;
      taken++;
      const savepoint = guarded && done.length > 0;
      let outcome: { ok: true; result: unknown } | { ok: false; error: unknown };
      const connection = new MemberConnection(this.#sqlite, this.#onQuery);
      try {
        if (savepoint) this.#exec(`savepoint ${SAVEPOINT}`);
        const result = member.body(this.#transaction(connection));
        outcome = { ok: true, result: result instanceof Promise ? await result : result };
      } catch (error) {
        outcome = { ok: false, error };
      } finally {
        connection.close();
      }
      if (!this.#sqlite.raw.isTransaction) {
        // SQLite rolled the whole transaction back (SQLITE_FULL, IOERR): every change of the group is gone.
        const error = outcome.ok ? new Error('SQLite rolled the transaction back') : outcome.error;
        if (outcome.ok) member.reject(error);
        else member.reject(outcome.error);
        for (const d of done) d.member.reject(error);
        return;
      }
      if (!outcome.ok && !savepoint) {
        member.reject(outcome.error);
        // Nothing of it to undo: the others' changes stay as they are.
        if (!connection.changed) continue;
        // Its changes lie in the transaction with the others', and nothing marks where they begin: the whole
        // transaction is undone, and the bodies that had succeeded in it run again, first in line, each in a
        // savepoint this time.
        this.#abandon([], outcome.error);
        this.#queue.unshift(...done.map((d) => d.member));
        taken -= done.length;
        done.length = 0;
        guarded = true;
        if (this.#queue.length === 0 || taken === MAX_MEMBERS || !this.#begin(MAX_MEMBERS - taken)) return;
        continue;
      }
      try {
        if (savepoint) {
          if (!outcome.ok) this.#exec(`rollback to ${SAVEPOINT}`);
          this.#exec(`release ${SAVEPOINT}`);
        }
      } catch (error) {
        this.#abandon(done, error);
        if (outcome.ok) member.reject(error);
        else member.reject(outcome.error);
        return;
      }
      if (outcome.ok) done.push({ member, result: outcome.result });
      else member.reject(outcome.error);
    }
    try {
      this.#exec('commit');
    } catch (error) {
      this.#abandon(done, error);
      return;
    }
    this.stats.commits++;
    this.stats.transactions += done.length;
    for (const { member, result } of done) member.resolve(result);
  }

  /** Rolls back what is left of the transaction, if anything, and fails every caller whose work was in it. */
  #abandon(done: Array<{ member: Member }>, error: unknown): void {
    if (this.#sqlite.raw.isTransaction) {
      try {
        this.#exec('rollback');
      } catch {
        // Nothing more can be done on this connection; SQLite rolls back what is left when it is closed.
      }
    }
    for (const d of done) d.member.reject(error);
  }

  /** The `tx` a body is given: a Kysely transaction whose statements run on the member's connection at once. */
  #transaction(connection: MemberConnection): Kysely<Tables> {
    const executor = this.#db.getExecutor().withConnectionProvider({ provideConnection: (consume) => consume(connection) });
    const tx = new Transaction<Tables>({ config: this.#config, executor, dialect: this.#config.dialect, driver: this.#driver });
    directStatements.set(tx, connection);
    return tx;
  }
}

/** The SQLite database's Kysely: its `transaction()` joins a group; everything else is Kysely's own. */
export class GroupCommitKysely extends Kysely<Tables> {
  readonly #group: SqliteGroupCommit;
  readonly #lock: ConnectionLock;

  constructor(sqlite: NodeSqliteDatabase, config: Omit<KyselyConfig, 'dialect'>, onQuery?: (query: CompiledQuery) => void) {
    const lock = new ConnectionLock();
    const full: KyselyConfig = { ...config, dialect: new LockedSqliteDialect({ database: sqlite }, lock) };
    super(full);
    this.#lock = lock;
    this.#group = new SqliteGroupCommit(sqlite, this, lock, full, onQuery);
  }

  override async destroy(): Promise<void> {
    this.#group.close();
    await super.destroy();
  }

  override transaction(): TransactionBuilder<Tables> {
    return this.#group.builder();
  }

  get commitStats(): Readonly<CommitStats> {
    return this.#group.stats;
  }

  /**
   * Holds the connection against every group and every query through Kysely until the returned function is
   * called (sqlite-checkpoints.ts: while the log starts over). They wait for it as for any other holder, without
   * blocking the event loop; the reads of a turn (readInTurn) do not take it and go on.
   */
  async holdConnection(): Promise<() => void> {
    await this.#lock.take();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#lock.release();
    };
  }
}
