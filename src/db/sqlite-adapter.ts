// Kysely's SqliteDialect expects a better-sqlite3-shaped database; node:sqlite is close but not the same
// (spread parameters, no `reader` flag, no booleans). This adapter bridges the two so that we need no native
// addon. Prepared statements are cached by SQL text: Kysely generates the same text for the same query shape.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SqliteDatabase, SqliteStatement } from 'kysely';
import { rowMakerFor, type RowMaker } from './row-makers.ts';

type Param = null | number | bigint | string | Uint8Array;

function toParam(value: unknown): Param {
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (value === undefined) return null;
  if (value instanceof Date) return value.toISOString();
  return value as Param;
}

/**
 * Rows as plain objects built here from the arrays node:sqlite answers (`setReturnArrays`). node:sqlite's own
 * row objects have a null prototype and are built property by property in dictionary mode: for a read of 500
 * enrolments of 13 columns, making them cost about 1 ms and reading their fields afterwards another 0.5 ms;
 * these cost a third of that, and have the same shape as a PostgreSQL row. As node:sqlite does, a column
 * named twice keeps its last value. Each statement makes its rows with a literal of its own columns, compiled once
 * (row-makers.ts).
 */
const NO_ROWS: RowMaker = () => ({});

/** What the group commit asks of a statement it runs (sqlite-group-commit.ts: could the body have changed anything). */
export interface NodeSqliteStatement extends SqliteStatement {
  /** A SELECT (its rows are not rows it changed). */
  readonly select: boolean;
  /** An INSERT, UPDATE, DELETE or REPLACE: its count of changes says whether it changed anything. */
  readonly rowWrite: boolean;
}

const SELECT = /^\s*select\b/i;
const ROW_WRITE = /^\s*(insert|update|delete|replace)\b/i;

class Statement implements NodeSqliteStatement {
  readonly reader: boolean;
  readonly select: boolean;
  readonly rowWrite: boolean;
  readonly #stmt: StatementSync;
  readonly #row: RowMaker;
  /** Ends the turn's shared read transaction, if one is open, before this statement runs on its own. */
  readonly #alone: () => void;
  constructor(stmt: StatementSync, alone: () => void) {
    this.#stmt = stmt;
    this.#alone = alone;
    this.select = SELECT.test(stmt.sourceSQL);
    this.rowWrite = ROW_WRITE.test(stmt.sourceSQL);
    const columns = stmt.columns().map((c) => c.name);
    this.reader = columns.length > 0;
    // A write without RETURNING has no rows to make.
    this.#row = this.reader ? rowMakerFor(columns) : NO_ROWS;
    if (this.reader) stmt.setReturnArrays(true);
  }
  all(parameters: ReadonlyArray<unknown>): unknown[] {
    this.#alone();
    return this.rows(parameters);
  }
  /** The rows, in whatever transaction the connection has open (the turn's read: NodeSqliteDatabase.readInTurn). */
  rows(parameters: ReadonlyArray<unknown>): unknown[] {
    const rows = this.#stmt.all(...parameters.map(toParam)) as unknown as unknown[][];
    const out = new Array<unknown>(rows.length);
    for (let i = 0; i < rows.length; i++) out[i] = this.#row(rows[i]);
    return out;
  }
  run(parameters: ReadonlyArray<unknown>) {
    this.#alone();
    const r = this.#stmt.run(...parameters.map(toParam));
    return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
  }
  *iterate(parameters: ReadonlyArray<unknown>): IterableIterator<unknown> {
    this.#alone();
    for (const values of this.#stmt.iterate(...parameters.map(toParam))) yield this.#row(values as unknown as unknown[]);
  }
}

const STATEMENT_CACHE_SIZE = 500;

const NOTHING_TO_ROLL_BACK: NodeSqliteStatement = {
  reader: false,
  select: false,
  rowWrite: false,
  all: () => [],
  run: () => ({ changes: 0, lastInsertRowid: 0 }),
  iterate: () => [][Symbol.iterator](),
};

/** The arguments of a shared read as one key, or undefined when one is not a string or a number (never shared). */
function sharedKey(parameters: ReadonlyArray<unknown>): string | undefined {
  if (parameters.length === 1 && typeof parameters[0] === 'string') return parameters[0];
  let key = '';
  for (const p of parameters) {
    if (typeof p !== 'string' && typeof p !== 'number') return undefined;
    key += `${typeof p === 'number' ? 'n' : 's'}${String(p).length}:${p}`;
  }
  return key;
}

export class NodeSqliteDatabase implements SqliteDatabase {
  readonly raw: DatabaseSync;
  readonly #cache = new Map<string, Statement>();
  /** Whether the connection's open transaction is the turn's shared read (readInTurn), not a group's or Kysely's. */
  #turnRead = false;
  readonly #beginRead: StatementSync;
  readonly #endRead: StatementSync;
  readonly #endTurnRead = () => this.endTurnRead();
  /** The rows of the turn's shared reads (readInTurn), by statement and then arguments: valid while its snapshot is. */
  readonly #sharedRows = new Map<string, Map<string, unknown[]>>();

  constructor(file: string) {
    this.raw = new DatabaseSync(file);
    // WAL lets readers proceed during a write; the busy timeout covers a second process (the CLI, a worker).
    this.raw.exec('PRAGMA journal_mode = WAL; PRAGMA foreign_keys = ON; PRAGMA busy_timeout = 5000; PRAGMA synchronous = NORMAL;');
    // Savepoints keep the pages they change in a sub-journal, a temporary file by default: a bulk request's
    // savepoint per operation then cost ~40 µs each in file writes (measured: 500 savepoints with two inserts
    // each, 28 ms instead of 10 ms without them; 14 ms with the sub-journal in memory). It is dropped when the
    // savepoint is released, so memory holds at most one transaction's changed pages.
    this.raw.exec('PRAGMA temp_store = MEMORY;');
    this.#beginRead = this.raw.prepare('begin');
    this.#endRead = this.raw.prepare('commit');
  }

  prepare(sql: string): NodeSqliteStatement {
    // SQLite rolls a transaction back by itself when a write fails for want of room or I/O (disk full,
    // SQLITE_FULL/IOERR). Kysely's ROLLBACK after it would then fail ("no transaction is active") and that
    // error would replace the one that says what happened (and makes it a 502, not a 500): nothing to undo. Nor
    // is there when the transaction open is the turn's read, which the rollback's caller never began.
    if (sql === 'rollback' && (!this.raw.isTransaction || this.#turnRead)) return NOTHING_TO_ROLL_BACK;
    return this.#statement(sql);
  }

  #statement(sql: string): Statement {
    let stmt = this.#cache.get(sql);
    if (stmt === undefined) {
      stmt = new Statement(this.raw.prepare(sql), this.#endTurnRead);
      if (this.#cache.size >= STATEMENT_CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value as string);
      this.#cache.set(sql, stmt);
    }
    return stmt;
  }

  /** A transaction is open that is not the turn's read: a group's write, or Kysely's (direct reads queue behind it). */
  get inOwnTransaction(): boolean {
    // The flag first: node:sqlite's isTransaction is a call into C++, asked before every direct read.
    return !this.#turnRead && this.raw.isTransaction;
  }

  /**
   * A read (direct-statements.ts: no other transaction open) in the read transaction that the reads of this turn
   * of the event loop share. In WAL mode every transaction, a lone SELECT's too, takes and drops a lock on a read
   * mark of the WAL index with two fcntl calls: about 6 µs here, where the lookup of a row by its key costs 1.5
   * (bench/README.md). The turn's reads share one snapshot, taken at its first, and one lock. The transaction
   * ends when the turn does (setImmediate), or before any other statement runs (every write, every BEGIN): so
   * a read after this process's write sees it, and another process's commit is seen from the next turn on.
   *
   * `shared`: the same statement with the same arguments answers the same rows for as long as the snapshot
   * lasts, so the turn's reads of it share one run and its rows (the organisation a request is for, read by
   * every request: about 3 µs a request, 9 where a request runs as much other code as an MCP call does, for
   * a statement run once a turn instead). The rows end with the transaction.
   */
  readInTurn(sql: string, parameters: ReadonlyArray<unknown>, shared = false): unknown[] {
    const key = shared ? sharedKey(parameters) : undefined;
    if (key !== undefined && this.#turnRead) {
      const rows = this.#sharedRows.get(sql)?.get(key);
      if (rows !== undefined) return rows;
    }
    const statement = this.#statement(sql);
    if (!this.#turnRead) {
      this.#beginRead.run();
      this.#turnRead = true;
      setImmediate(this.#endTurnRead);
    }
    let rows: unknown[];
    try {
      rows = statement.rows(parameters);
    } catch (err) {
      this.endTurnRead();
      throw err;
    }
    if (key !== undefined) {
      let bySql = this.#sharedRows.get(sql);
      if (bySql === undefined) this.#sharedRows.set(sql, (bySql = new Map()));
      bySql.set(key, rows);
    }
    return rows;
  }

  /** Ends the turn's read transaction, if one is open (it changed nothing: its COMMIT only lets the lock go). */
  endTurnRead(): void {
    if (!this.#turnRead) return;
    this.#turnRead = false;
    if (this.#sharedRows.size > 0) this.#sharedRows.clear();
    if (this.raw.isOpen && this.raw.isTransaction) this.#endRead.run();
  }

  close(): void {
    this.endTurnRead();
    this.#cache.clear();
    this.raw.close();
  }
}
