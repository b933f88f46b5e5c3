// The long-lived pipelined connections that requests share on PostgreSQL (postgres-driver.ts): statements issued
// in one turn of the event loop leave on one of them in a single socket write, answered in order, so that ten
// requests' statements cost the process one write and PostgreSQL one wake-up instead of ten (bench/README.md).
// Each statement is sent with its own Sync, so that one that fails fails alone.
//
// Two sets, for two kinds of statement that may wait on one another's connection without harm:
// - readers, for plain reads outside a transaction: a plain SELECT never waits for a lock, so one cannot hold the
//   others up for longer than it runs;
// - writers, for a write that is a whole transaction in one statement (single-statement.ts). The writes that
//   reach a writer while it commits the previous ones are committed together, one transaction and one WAL flush
//   for all of them (pg-group-commit.ts). A write may wait for a row lock that a transaction elsewhere holds, and
//   the writes of its group would wait too: so a writer's session has a lock timeout (WRITER_LOCK_TIMEOUT_MS), past
//   which its write gives up having done nothing, and the driver sends it again on a pooled connection of its own
//   (postgres-driver.ts). Past WRITES_IN_FLIGHT waiting or being committed on each writer, a write goes to the
//   pool as before.
//
// They get the pool's settings (server, schema, type parsers, timeouts, keep-alive), log their failures the same
// way and are replaced when their connection fails or holds a prepared statement a migration outdated.
import { setImmediate } from 'node:timers';
import type net from 'node:net';
import pg from 'pg';
import { queryOn } from './pg-shaped-query.ts';
import type { CompiledQuery } from 'kysely';
import { isDatabaseUnavailable } from './availability.ts';
import { isStalePreparedStatement } from './outdated-plans.ts';
import type { RoundTripObserver } from './database-types.ts';
import { GROUP_LIMIT, GroupCommit } from './pg-group-commit.ts';

/** Shared read connections, and shared write connections. */
const SHARED_READERS = 2;
const SHARED_WRITERS = 2;
/**
 * Reads stay on the reader already in use this turn, so that they leave in one write, until it has this many
 * in flight; then they go to the least busy one, so that a slow read holds up few others.
 */
const READS_IN_FLIGHT = 16;
/**
 * The writes a writer carries at once, waiting or being committed: one group commits while the next gathers, so
 * past a group's worth of them waiting (GROUP_LIMIT), a write waits less on a pooled connection.
 */
const WRITES_IN_FLIGHT = GROUP_LIMIT * 2;
/**
 * How long a write on a writer may wait for a row lock (PostgreSQL's `lock_timeout`, for the writers' sessions
 * only): the writes sent behind it wait at most this long for it. A transaction holding the row (a bulk request,
 * a keyed write) usually ends well within it; when it does not, the write runs on a pooled connection instead.
 */
export const WRITER_LOCK_TIMEOUT_MS = 50;

type PgClient = pg.Client & { connection: { stream: net.Socket } };

/** How a CompiledQuery goes to node-postgres (postgres-driver.ts: named when it is prepared). */
type ToConfig = (query: CompiledQuery) => pg.QueryConfig;

/** A long-lived pipelined connection; reconnects on next use after losing its connection. */
class SharedConnection {
  readonly #options: pg.ClientConfig;
  readonly #toConfig: ToConfig;
  readonly #onConnectionError: (err: Error) => void;
  readonly #onRoundTrip: RoundTripObserver | undefined;
  #ready: Promise<PgClient> | undefined;
  /** #ready's client once it has connected: a statement goes to it at once, not after an await of #ready. */
  #client: PgClient | undefined;
  #corked: PgClient | undefined;
  /** A statement of this turn of the event loop came here (set at once, before its connection is awaited). */
  #turnOpen = false;
  inFlight = 0;

  /**
   * Whether a statement of this turn of the event loop already came here, so that another of the turn joins its
   * write: known from the statement's first step, not from its cork (set only once its connection is awaited),
   * or reads issued together (a request's row and the settings of its type) would go to two connections.
   */
  get batching(): boolean {
    return this.#turnOpen;
  }

  /** `onRoundTrip`: told about each write, for the connections whose callers do not count their own. */
  constructor(options: pg.ClientConfig, toConfig: ToConfig, onConnectionError: (err: Error) => void, onRoundTrip: RoundTripObserver | undefined) {
    this.#options = options;
    this.#toConfig = toConfig;
    this.#onConnectionError = onConnectionError;
    this.#onRoundTrip = onRoundTrip;
  }

  #connect(): Promise<PgClient> {
    const client = new pg.Client({ ...this.#options, pipeline: true }) as PgClient;
    const ready = client.connect().then(() => {
      if (this.#ready === ready) this.#client = client;
      return client;
    });
    this.#ready = ready;
    // A lost connection fails the statements in flight (node-postgres rejects them); the next one reconnects.
    client.on('error', (err) => {
      this.#onConnectionError(err);
      this.#drop(ready);
    });
    client.on('end', () => this.#drop(ready));
    ready.catch(() => this.#drop(ready));
    return ready;
  }

  /**
   * Forgets a connection, so that the next statement makes a new one; ends it if it is still open, once the
   * statements already sent on it have answered (node-postgres's pipeline mode waits for them).
   */
  #drop(ready: Promise<PgClient>): void {
    if (this.#ready !== ready) return;
    this.#ready = undefined;
    this.#client = undefined;
    void ready.then((client) => client.end()).catch(() => {});
  }

  /** The open connection, opened if need be. */
  open(): Promise<PgClient> {
    return this.#ready ?? this.#connect();
  }

  toConfig(query: CompiledQuery): pg.QueryConfig {
    return this.#toConfig(query);
  }

  /**
   * After a statement failed: a connection timed out or cut off may be stuck behind the lost statement (pg-pool.ts
   * does the same), and one that holds a prepared statement a table's change outdated (outdated-plans.ts) would fail
   * again; either is forgotten, for the next statement to open another.
   */
  failed(err: unknown): void {
    if ((isDatabaseUnavailable(err) || isStalePreparedStatement(err)) && this.#ready) this.#drop(this.#ready);
  }

  /**
   * The statement's result. Not async: on a connection already open the statement is handed to node-postgres at
   * once, and its answer comes back through one step that also counts it out, where async functions around it
   * made four promises more a statement (bench/README.md, fifth session).
   */
  query(query: CompiledQuery): Promise<pg.QueryResult> {
    return this.#query(query, true);
  }

  #query(query: CompiledQuery, mayRunAgain: boolean): Promise<pg.QueryResult> {
    this.inFlight++;
    if (!this.#turnOpen) {
      this.#turnOpen = true;
      setImmediate(() => (this.#turnOpen = false));
    }
    let answer: Promise<pg.QueryResult>;
    try {
      const client = this.#client;
      answer = client !== undefined ? this.#send(client, query) : this.open().then((opened) => this.#send(opened, query));
    } catch (err) {
      answer = Promise.reject(err);
    }
    return answer.then(
      (result) => {
        this.inFlight--;
        return result;
      },
      (err: unknown) => {
        this.inFlight--;
        this.failed(err);
        // Its connection was replaced (failed): refused as outdated, the statement did nothing, and may simply run
        // again, parsed afresh.
        if (mayRunAgain && isStalePreparedStatement(err)) return this.#query(query, false);
        throw err;
      },
    );
  }

  #send(client: PgClient, query: CompiledQuery): Promise<pg.QueryResult> {
    if (this.#corked !== client) {
      // The first statement of this turn of the event loop: hold the socket until the turn ends, so that the
      // statements of every request handled in it leave in one write.
      this.#corked = client;
      // The statements that join this one in the turn travel in the same write: one round trip for them all.
      this.#onRoundTrip?.([query.sql]);
      client.connection.stream.cork();
      setImmediate(() => {
        this.#corked = undefined;
        client.connection.stream.uncork();
      });
    }
    return queryOn(client, this.#toConfig(query));
  }

  async end(): Promise<void> {
    const ready = this.#ready;
    this.#ready = undefined;
    if (ready) await (await ready.catch(() => undefined))?.end();
  }
}

/** The connection this turn's statements already use, while it has room; else the least busy one with room. */
function pick<C extends { batching: boolean; inFlight: number }>(connections: readonly C[], room: number): C | undefined {
  let chosen = connections.find((c) => c.batching && c.inFlight < room);
  if (chosen !== undefined) return chosen;
  for (const c of connections) if (c.inFlight < room && (chosen === undefined || c.inFlight < chosen.inFlight)) chosen = c;
  return chosen;
}

interface SharedConnectionsOptions {
  toConfig: ToConfig;
  onConnectionError: (err: Error) => void;
  /** Told about each write of the readers (a writer's caller counts its own: postgres-driver.ts). */
  onRoundTrip: RoundTripObserver | undefined;
}

/** The readers and the writers of one driver. */
export class SharedConnections {
  readonly #readers: SharedConnection[];
  readonly #writers: GroupCommit[];
  readonly #connections: SharedConnection[];

  constructor(poolOptions: pg.ClientConfig, options: SharedConnectionsOptions) {
    const { toConfig, onConnectionError, onRoundTrip } = options;
    this.#readers = Array.from({ length: SHARED_READERS }, () => new SharedConnection(poolOptions, toConfig, onConnectionError, onRoundTrip));
    const writerOptions = { ...poolOptions, lock_timeout: WRITER_LOCK_TIMEOUT_MS };
    const writers = Array.from({ length: SHARED_WRITERS }, () => new SharedConnection(writerOptions, toConfig, onConnectionError, undefined));
    this.#writers = writers.map((connection) => new GroupCommit(connection));
    this.#connections = [...this.#readers, ...writers];
  }

  /** A reader: always one (a read may wait behind others of its turn, never behind a lock). */
  reader(): SharedConnection {
    return pick(this.#readers, READS_IN_FLIGHT) ?? pick(this.#readers, Infinity)!;
  }

  /** A writer with room for one more write, or undefined: the write then takes a pooled connection. */
  writer(): GroupCommit | undefined {
    return pick(this.#writers, WRITES_IN_FLIGHT);
  }

  async end(): Promise<void> {
    // A write given before the end is still committed and answered.
    await Promise.all(this.#writers.map((w) => w.drained()));
    await Promise.all(this.#connections.map((c) => c.end()));
  }
}
