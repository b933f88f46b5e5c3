// Group commit on PostgreSQL's shared writers (shared-connections.ts): the one-statement writes (single-statement.ts)
// that reach a writer while its previous group is being committed wait for it, then leave together as one
// transaction in one socket write: once the writer has run each of their statements, as one batch with a single
// Sync (pg-shaped-query.ts batchOn: PostgreSQL answers all of it in one write), else as `BEGIN`, each write,
// `COMMIT`. However many requests sent them, that is one WAL flush for PostgreSQL, one wake-up of its backend,
// and, as a batch, one of this process for all their answers: under load, a PATCH costs the service about 0.7 ×
// the CPU it cost with each write committed on its own, and a batch about 0.87 × a BEGIN … COMMIT group
// (bench/README.md). A write that finds nothing in flight leaves at the end of its turn of the event loop, with
// whatever else that turn sent, so a lone write waits no longer than it did before.
//
// What each write still gets, as if it had run alone:
// - Nothing is answered before the group's COMMIT has answered: a write's result is handed back only then. A
//   write node-postgres could not send (a value it cannot serialise) fails alone there, having done nothing.
// - Atomic together: if any part of the group fails, PostgreSQL rolls all of it back, and none of it is kept. Then:
//   - a write refused by its own premise (atrium_require, riders.ts) gets its refusal: its caller takes its full
//     path, which reads everything afresh, so it does not matter that the refusal was seen after the others' writes;
//   - a write whose row lock it waited for past the writer's lock timeout gets that failure, having done nothing:
//     the driver sends it again on a pooled connection (postgres-driver.ts writeAlone), as before;
//   - every other write of the group runs again by itself, in order, each its own transaction, pipelined on the
//     writer: the way every write ran before group commit, so a failing write fails alone and the others commit.
// - A lost connection fails the group's writes, as it failed the statements in flight before (the caller cannot
//   know whether the COMMIT was made: 503).
// - A write that takes a transaction-scoped advisory lock (locks.ts) must never be grouped: two of them in one
//   transaction would both have the lock. None comes here: the lock's rider names no premise, so the driver never
//   folds it into a one-statement write (postgres-driver.ts foldWithRiders; the driver's test holds it).
import { setImmediate } from 'node:timers';
import type pg from 'pg';
import type { CompiledQuery } from 'kysely';
import { isDatabaseUnavailable } from './availability.ts';
import { isLockTimeout } from './errors.ts';
import { isPremiseFailure } from './riders.ts';
import { batchOn, queryOn, type BatchOutcome } from './pg-shaped-query.ts';

/** The most writes one group carries; the rest wait for the next. */
export const GROUP_LIMIT = 64;

/** The connection a group is sent on (shared-connections.ts SharedConnection). */
export interface GroupConnection {
  /** The open connection, opened if need be. */
  open(): Promise<pg.Client & { connection: { stream: { cork(): void; uncork(): void } } }>;
  /** How a CompiledQuery goes to node-postgres. */
  toConfig(query: CompiledQuery): pg.QueryConfig;
  /** One statement as its own transaction, pipelined with the others of its turn (the way writes ran alone). */
  query(query: CompiledQuery): Promise<pg.QueryResult>;
  /** Forgets the connection if `err` leaves it unusable, so that the next statement opens another. */
  failed(err: unknown): void;
}

interface Waiting {
  query: CompiledQuery;
  resolve(result: pg.QueryResult): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; result: pg.QueryResult } | { ok: false; err: unknown };

const BEGIN = 'begin';
const COMMIT = 'commit';

const outcomeOf = (sent: Promise<pg.QueryResult>): Promise<Outcome> => sent.then((result) => ({ ok: true, result }), (err: unknown) => ({ ok: false, err }));
/** A failure the write keeps, group or not: its premise refused, or its row lock not had in time (it did nothing). */
const keepsItsFailure = (err: unknown) => isPremiseFailure(err) || isLockTimeout(err);

export class GroupCommit {
  readonly #connection: GroupConnection;
  #waiting: Waiting[] = [];
  /** Writes in the group being committed (0: none in flight). */
  #committing = 0;
  #scheduled = false;
  /** Who waits for every write to have been answered (drained). */
  #onIdle: Array<() => void> = [];

  constructor(connection: GroupConnection) {
    this.#connection = connection;
  }

  /** Writes are waiting to leave: another of this turn joins them. */
  get batching(): boolean {
    return this.#waiting.length > 0;
  }

  /** Writes waiting or being committed. */
  get inFlight(): number {
    return this.#waiting.length + this.#committing;
  }

  /** Once every write given so far has been answered: before its connection is closed. */
  drained(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.#onIdle.push(resolve));
  }

  /** `query` committed with the group it joins; its result once that group's COMMIT has answered. */
  query(query: CompiledQuery): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ query, resolve, reject });
      if (this.#committing === 0) this.#schedule();
    });
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#commitNext);
  }

  readonly #commitNext = async (): Promise<void> => {
    this.#scheduled = false;
    const group = this.#waiting.splice(0, GROUP_LIMIT);
    if (group.length === 0) return;
    this.#committing = group.length;
    try {
      // One write alone needs no BEGIN or COMMIT: it is its own transaction.
      if (group.length === 1) await this.#alone(group[0]);
      else await this.#together(group);
    } finally {
      this.#committing = 0;
      // The writes that came meanwhile, with whatever else this turn sends.
      if (this.#waiting.length > 0) this.#schedule();
      else for (const resolve of this.#onIdle.splice(0)) resolve();
    }
  };

  async #alone(write: Waiting): Promise<void> {
    try {
      write.resolve(await this.#connection.query(write.query));
    } catch (err) {
      write.reject(err);
    }
  }

  async #together(group: Waiting[]): Promise<void> {
    let client;
    try {
      client = await this.#connection.open();
    } catch (err) {
      for (const write of group) write.reject(err);
      return;
    }
    // Statements this connection has run before leave as one implicit transaction with one Sync (pg-shaped-query.ts
    // batchOn): PostgreSQL answers the whole group in one write, so it wakes this process once, not once a statement.
    const batch = batchOn(client, group.map((write) => this.#connection.toConfig(write.query)));
    if (batch !== undefined) return this.#settleBatch(group, await batch);
    const stream = client.connection.stream;
    stream.cork();
    const begun = outcomeOf(client.query(BEGIN));
    const written = group.map((write) => outcomeOf(queryOn(client, this.#connection.toConfig(write.query))));
    const committed = outcomeOf(client.query(COMMIT));
    stream.uncork();
    const [begin, commit, ...outcomes] = await Promise.all([begun, committed, ...written]);
    // Committed: each write has its own outcome. One can have failed here only before it reached PostgreSQL
    // (node-postgres could not send a value), having done nothing; a failure in PostgreSQL rolls the group back.
    if (commit.ok && commit.result.command === 'COMMIT') {
      for (const [i, write] of group.entries()) {
        const outcome = outcomes[i];
        if (outcome.ok) write.resolve(outcome.result);
        else write.reject(outcome.err);
      }
      return;
    }
    // Rolled back, all of it. A lost connection fails every write, as it failed the statements in flight before.
    const failures = [begin, commit, ...outcomes].flatMap((o) => (o.ok ? [] : [o.err]));
    for (const err of failures) this.#connection.failed(err);
    const lost = failures.find(isDatabaseUnavailable);
    if (lost !== undefined) {
      for (const [i, write] of group.entries()) {
        const outcome = outcomes[i];
        write.reject(outcome.ok ? lost : outcome.err);
      }
      return;
    }
    await this.#aloneAfterRollback(group, (i) => {
      const outcome = outcomes[i];
      return outcome.ok ? undefined : outcome.err;
    });
  }

  /** A batch's outcome: each write's result; or, rolled back, as #together's. */
  async #settleBatch(group: Waiting[], outcome: BatchOutcome): Promise<void> {
    if (outcome.ok) {
      // Committed. A write whose answer could not be read fails alone, as in #together: it is not run again.
      for (const [i, write] of group.entries()) {
        if (outcome.unread?.at === i) write.reject(outcome.unread.err);
        else write.resolve(outcome.results[i]);
      }
      return;
    }
    const { err, at } = outcome;
    this.#connection.failed(err);
    if (isDatabaseUnavailable(err)) {
      for (const write of group) write.reject(err);
      return;
    }
    // PostgreSQL stopped at the write `at` (or, with every write done, at the commit): its failure is its own.
    await this.#aloneAfterRollback(group, (i) => (i === at ? err : undefined));
  }

  /** After a group was rolled back: a write keeps its own failure where it is its own (failureOf), the others run again alone. */
  async #aloneAfterRollback(group: Waiting[], failureOf: (index: number) => unknown): Promise<void> {
    await Promise.all(
      group.map((write, i) => {
        const err = failureOf(i);
        if (err !== undefined && keepsItsFailure(err)) return write.reject(err);
        return this.#alone(write);
      }),
    );
  }
}
