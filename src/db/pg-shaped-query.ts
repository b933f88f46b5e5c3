// node-postgres's Query, for our named statements (prepared.ts, statement-shapes.ts), without the two costs it
// pays on every execution of a statement whose result it has seen before on the same connection (measured with
// perf on the PostgreSQL read, bench/README.md: about a tenth of the server's CPU per read):
//
// 1. It asks for the result's description each time (Describe), so PostgreSQL sends a RowDescription that
//    pg-protocol parses and Result.addFields turns into parsers and an empty row built key by key. A prepared
//    statement's result cannot change on its connection (PostgreSQL refuses to run it instead: SQLSTATE 0A000,
//    outdated-plans.ts), so once a connection has described it, Describe is left out and the description
//    kept is used. A statement parsed again on that connection (after an error dropped it) is described again.
// 2. It builds each row by spreading that empty row and assigning field by field (V8's megamorphic keyed
//    store). Here each result shape has its rows made by an object literal compiled once, as SQLite's are
//    (row-makers.ts).
//
// Everything else (Parse, Bind, the pipeline, errors, the callback) is node-postgres's own: this is a subclass
// of its Query, the extension it lets through in pipeline mode. Unnamed statements and binary results take
// node-postgres's own path.
import pg from 'pg';
import utils from 'pg/lib/utils.js';
import PgResult from 'pg/lib/result.js';
import { rowMaker, type RowMaker, type ValueParser } from './row-makers.ts';

interface FieldDescription {
  name: string;
  dataTypeID: number;
  format?: string;
}

interface Shape {
  fields: FieldDescription[];
  make: RowMaker;
}

/** What node-postgres's Query keeps and does, as far as this subclass reaches into it (pg/lib/query.js). */
interface QueryInternals {
  name?: string;
  portal: string;
  values?: unknown[];
  binary?: boolean;
  rows?: number;
  callback?: unknown;
  _canceledDueToError: unknown;
  _accumulateRows: boolean;
  _result: { fields: FieldDescription[]; rows: unknown[]; _types?: { getTypeParser(oid: number, format: string): ValueParser } };
  _checkForMultirow(): void;
  _getRows(connection: Connection, rows: number | undefined): void;
  hasBeenParsed(connection: Connection): boolean;
  handleError(err: unknown, connection: Connection): void;
  listenerCount(event: string): number;
  prepare(connection: Connection): void;
  handleRowDescription(msg: { fields: FieldDescription[] }): void;
  handleDataRow(msg: { fields: Array<string | null> }): void;
}

interface Connection {
  bind(options: { portal: string; statement?: string; values?: unknown[]; binary?: boolean; valueMapper: unknown }): void;
  execute(options: { portal: string; rows: number }): void;
  close(options: { type: string; name?: string }): void;
  sync(): void;
}

type QueryCallback = (err: Error | undefined, result: pg.QueryResult) => void;
const PgQuery = pg.Query as unknown as new (text: string, values: unknown[] | undefined, callback: QueryCallback) => QueryInternals;

/** Per connection, the shape of each named statement it has described. */
const described = new WeakMap<Connection, Map<string, Shape>>();
/** Compiled row makers, by the result's field names and types (shared by the connections). */
const makers = new Map<string, RowMaker>();

/** The shape of a result, or undefined where node-postgres's own row building must be kept (binary results). */
function shapeOf(fields: FieldDescription[], types: QueryInternals['_result']['_types']): Shape | undefined {
  if (types === undefined || fields.some((f) => f.format !== undefined && f.format !== 'text')) return undefined;
  const key = fields.map((f) => `${f.name}\u0000${f.dataTypeID}`).join('\u0001');
  let make = makers.get(key);
  if (make === undefined) {
    make = rowMaker(
      fields.map((f) => f.name),
      fields.map((f) => types.getTypeParser(f.dataTypeID, 'text')),
    );
    makers.set(key, make);
  }
  return { fields, make };
}

class ShapedQuery extends PgQuery {
  #connection: Connection | undefined;
  #shape: Shape | undefined;

  constructor(name: string, text: string, values: unknown[] | undefined, callback: QueryCallback) {
    // The text, not a config: node-postgres copies a config object through its property descriptors
    // (cloneQueryConfig: 1.9 µs a PostgreSQL PATCH in its profile), where of a text it makes a literal.
    super(text, values, callback);
    this.name = name;
  }

  override prepare(connection: Connection): void {
    this.#connection = connection;
    const known = this.name === undefined || !this.hasBeenParsed(connection) ? undefined : described.get(connection)?.get(this.name);
    if (known === undefined) {
      super.prepare(connection);
      return;
    }
    this.#shape = known;
    this._result.fields = known.fields;
    this._accumulateRows = true;
    // node-postgres's prepare for a statement already parsed: Bind, then Execute and Sync, without Describe.
    try {
      connection.bind({ portal: this.portal, statement: this.name, values: this.values, binary: this.binary, valueMapper: utils.prepareValue });
    } catch (err) {
      connection.close({ type: 'S', name: this.name });
      connection.sync();
      this.handleError(err, connection);
      return;
    }
    this._getRows(connection, this.rows);
  }

  override handleRowDescription(msg: { fields: FieldDescription[] }): void {
    const shape = this.name === undefined || this.listenerCount('row') > 0 ? undefined : shapeOf(msg.fields, this._result._types);
    if (shape === undefined) {
      super.handleRowDescription(msg);
      return;
    }
    this._checkForMultirow();
    this.#shape = shape;
    this._result.fields = msg.fields;
    this._accumulateRows = true;
    if (this.#connection !== undefined) {
      let shapes = described.get(this.#connection);
      if (shapes === undefined) described.set(this.#connection, (shapes = new Map()));
      shapes.set(this.name!, shape);
    }
  }

  override handleDataRow(msg: { fields: Array<string | null> }): void {
    const shape = this.#shape;
    if (shape === undefined) {
      super.handleDataRow(msg);
      return;
    }
    if (this._canceledDueToError) return;
    try {
      this._result.rows.push(shape.make(msg.fields));
    } catch (err) {
      this._canceledDueToError = err;
    }
  }
}

/**
 * How a batch ended. Committed: every statement's result, and `unread`, a statement whose rows could not be made
 * here (a type parser threw), committed all the same. Rolled back: PostgreSQL's failure and the statement it came at
 * (`at`: the count of statements that had completed; all of them when it was the commit).
 */
export type BatchOutcome = { ok: true; results: pg.QueryResult[]; unread?: { at: number; err: unknown } } | { ok: false; err: unknown; at: number };

interface BatchStatement {
  name: string;
  /** The values as node-postgres sends them (utils.prepareValue), made before anything is written. */
  values: unknown[];
  shape: Shape;
}

/**
 * Named statements this connection has parsed and described, sent as one implicit transaction: a Bind and an
 * Execute each, and one Sync after the last. PostgreSQL runs them in order, each seeing the ones before, and
 * commits them at the Sync, or, at the first failure, skips the rest and rolls all of it back; and it sends
 * their answers when the Sync is reached, in one write, so the group's answers wake this process once where
 * BEGIN, a Sync after each statement and COMMIT had PostgreSQL send one write for each of them, and each found
 * this process asleep (bench/README.md, "Where things stand", 2026-11-30 third session).
 */
class ShapedBatch extends PgQuery {
  readonly #statements: BatchStatement[];
  readonly #results: Array<pg.QueryResult & { addCommandComplete(msg: unknown): void }>;
  #current = 0;
  /** The first statement whose rows could not be made, and why: PostgreSQL went on, and may commit it. */
  #unread: { at: number; err: unknown } | undefined;
  #settle: ((outcome: BatchOutcome) => void) | undefined;

  constructor(statements: BatchStatement[], settle: (outcome: BatchOutcome) => void) {
    // A text, so that node-postgres takes it for a query; it is never sent.
    super('batch', undefined, () => {});
    this.#statements = statements;
    this.#settle = settle;
    this.#results = statements.map(({ shape }) => {
      const result = new PgResult(undefined, undefined);
      result.fields = shape.fields as pg.FieldDef[];
      return result;
    });
  }

  submit(connection: Connection & { stream: { cork?(): void; uncork?(): void } }): null {
    connection.stream.cork?.();
    try {
      for (const { name, values } of this.#statements) {
        connection.bind({ portal: '', statement: name, values, valueMapper: undefined });
        connection.execute({ portal: '', rows: 0 });
      }
      connection.sync();
    } finally {
      connection.stream.uncork?.();
    }
    return null;
  }

  #end(outcome: BatchOutcome): void {
    const settle = this.#settle;
    this.#settle = undefined;
    settle?.(outcome);
  }

  override handleRowDescription(): void {
    // Not asked for (no Describe): the shapes are known.
  }

  override handleDataRow(msg: { fields: Array<string | null> }): void {
    const at = this.#current;
    if (this.#unread?.at === at) return;
    try {
      this.#results[at].rows.push(this.#statements[at].shape.make(msg.fields));
    } catch (err) {
      this.#unread ??= { at, err };
    }
  }

  handleCommandComplete(msg: unknown): void {
    this.#results[this.#current++].addCommandComplete(msg);
  }

  /** PostgreSQL's failure (rolled back, all of it), or the connection's. */
  override handleError(err: unknown): void {
    this.#end({ ok: false, err, at: this.#current });
  }

  handleReadyForQuery(): void {
    this.#end({ ok: true, results: this.#results, ...(this.#unread !== undefined ? { unread: this.#unread } : {}) });
  }

  handleEmptyQuery(): void {}
  handlePortalSuspended(): void {}
}

/**
 * `configs` as one implicit transaction on `client` (ShapedBatch), in order; undefined, having sent nothing,
 * unless every one is a plain named statement that this connection has parsed and described (by queryOn) and
 * every value can be sent: those go through queryOn, the first time of each.
 */
export function batchOn(client: pg.Client | pg.PoolClient, configs: readonly pg.QueryConfig[]): Promise<BatchOutcome> | undefined {
  const connection = (client as unknown as { connection: Connection & { parsedStatements: Record<string, string> } }).connection;
  const shapes = described.get(connection);
  if (shapes === undefined) return undefined;
  const statements: BatchStatement[] = [];
  for (const config of configs) {
    const name = config.name;
    if (!plainNamed(config) || connection.parsedStatements[name!] !== config.text) return undefined;
    const shape = shapes.get(name!);
    if (shape === undefined) return undefined;
    let values: unknown[];
    try {
      values = (config.values ?? []).map((value) => utils.prepareValue(value));
    } catch {
      return undefined;
    }
    statements.push({ name: name!, values, shape });
  }
  return new Promise((resolve) => {
    client.query(new ShapedBatch(statements, resolve) as unknown as pg.Submittable);
  });
}

/** A config of a name, a text and values only (postgres-driver.ts toConfig): ShapedQuery takes nothing else. */
const plainNamed = (config: pg.QueryConfig & { rowMode?: unknown; binary?: unknown; rows?: unknown; queryMode?: unknown; portal?: unknown; callback?: unknown }) =>
  config.name !== undefined && config.rowMode === undefined && config.types === undefined && config.binary === undefined && config.rows === undefined && config.queryMode === undefined && config.portal === undefined && config.callback === undefined;

/** `client.query(config)` as node-postgres answers it; a named statement through ShapedQuery. */
export function queryOn(client: pg.Client | pg.PoolClient, config: pg.QueryConfig): Promise<pg.QueryResult> {
  if (!plainNamed(config)) return client.query(config);
  return new Promise((resolve, reject) => {
    client.query(new ShapedQuery(config.name!, config.text, config.values, (err, result) => (err ? reject(err) : resolve(result))) as unknown as pg.Submittable);
  });
}
