// Statements that ride with the next one a request sends, instead of costing a round trip each: the request's
// tenancy check (src/http/pipeline.ts), which reads the organisation a cached copy stood in for, and with an
// Idempotency-Key its lock and the check that the key has no record yet (src/http/idempotency.ts). A request's
// riders are a list, sent in order. The PostgreSQL driver sends them in the same write as the request's first statement (a plain read on a shared
// connection, or the first statement of its transaction, after BEGIN) and runs its check on the answer before
// that statement's result is handed back: a failed check fails the statement, and so rolls its transaction
// back. A request that sent nothing (or a database that takes no riders, SQLite) sends it by itself (sendRider).
// A rider that states its premise in SQL (`atomic`: the statement itself fails when the check would, with
// atrium_require, migration 20261126230000) may also travel with its transaction's COMMIT: a failure aborts the
// transaction, so the COMMIT cannot commit what the check refuses.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { CompiledQuery } from 'kysely';
import type { Db } from './database-types.ts';

export interface Rider {
  readonly query: CompiledQuery;
  /** Throws if the rows say the request must not go on as it started. */
  readonly check: (rows: unknown[]) => void;
  taken: boolean;
  /** Only a transaction's statement may take it (a lock held until COMMIT), never a read on a shared connection. */
  readonly transactional: boolean;
  /** Its statement fails when its premise does not hold (see above): it may ride with a COMMIT. */
  readonly atomic: boolean;
  /**
   * For a rider whose check reads no row and whose statement fails with atrium_require naming this premise: it may
   * be folded into a write's one statement (single-statement.ts), its failure told from the write's by the name.
   */
  readonly premise?: string;
  /** Settles once the check has run: rejected with the check's error. */
  readonly outcome: Promise<void>;
  /** Whether its check held: undefined until it has run (then `outcome` is already settled the same way). */
  readonly held: boolean | undefined;
  settle(rows: unknown[] | Error): void;
}

export interface RiderOptions {
  transactional?: boolean;
  /**
   * For an atomic rider: the error its statement's failure stands for (the premise no longer holds), or the
   * failure itself when it is something else (the connection was lost).
   */
  refused?: (failure: Error) => Error;
  /** See Rider.premise. */
  premise?: string;
}

/** The SQLSTATE atrium_require raises when a premise does not hold. */
export const PREMISE_FAILED = 'AT001';

/** The outcome of every rider whose check held before anyone asked for it: nothing to wait for, nothing to make. */
const HELD: Promise<void> = Promise.resolve();

/**
 * A rider's outcome is made only when someone asks for it, and a check that held before that is answered with
 * HELD: a rider folded into its request's statement is settled as the statement answers, before anyone waits,
 * and every PostgreSQL request that starts from a cached organisation carries one (made eagerly, its promise and
 * the catch that keeps an unheard refusal quiet were two promises a request). The first settlement is the one kept.
 */
class CheckedRider implements Rider {
  taken = false;
  readonly query: CompiledQuery;
  readonly check: (rows: unknown[]) => void;
  readonly transactional: boolean;
  readonly atomic: boolean;
  readonly premise?: string;
  readonly #refused: ((failure: Error) => Error) | undefined;
  #held: boolean | undefined;
  #refusal: unknown;
  #outcome: Promise<void> | undefined;
  #resolve: (() => void) | undefined;
  #reject: ((err: unknown) => void) | undefined;

  constructor(query: CompiledQuery, check: (rows: unknown[]) => void, options: RiderOptions) {
    this.query = query;
    this.check = check;
    this.#refused = options.refused;
    this.transactional = options.transactional === true;
    this.atomic = options.refused !== undefined;
    if (options.premise !== undefined) this.premise = options.premise;
  }

  get held(): boolean | undefined {
    return this.#held;
  }

  get outcome(): Promise<void> {
    if (this.#outcome !== undefined) return this.#outcome;
    if (this.#held === true) return HELD;
    const outcome =
      this.#held === false
        ? Promise.reject(this.#refusal)
        : new Promise<void>((resolve, reject) => {
            this.#resolve = resolve;
            this.#reject = reject;
          });
    // Nobody may be waiting yet when the check fails; whoever waits later still sees it.
    outcome.catch(() => {});
    return (this.#outcome = outcome);
  }

  settle(rows: unknown[] | Error): void {
    if (this.#held !== undefined) return;
    if (rows instanceof Error) return this.#refuse(this.#refused ? this.#refused(rows) : rows);
    try {
      this.check(rows);
    } catch (err) {
      return this.#refuse(err);
    }
    this.#held = true;
    this.#resolve?.();
  }

  #refuse(refusal: unknown): void {
    this.#held = false;
    this.#refusal = refusal;
    this.#reject?.(refusal);
  }
}

export function createRider(query: CompiledQuery, check: (rows: unknown[]) => void, options: RiderOptions = {}): Rider {
  return new CheckedRider(query, check, options);
}

/** The riders of this context, outermost first: a request's tenancy check, then what its transaction adds. */
const current = new AsyncLocalStorage<readonly Rider[]>();

/** Runs `fn` with `rider` waiting to go with its first statement, after any rider of the context around it. */
export function withRider<R>(rider: Rider, fn: () => R): R {
  return current.run([...(current.getStore() ?? []), rider], fn);
}

/**
 * For the driver: the riders waiting in this context that a statement here may take, now taken (each is sent
 * at most once), in order; undefined when there is none.
 */
export function takeRiders(inTransaction: boolean): Rider[] | undefined {
  const riders = current.getStore();
  if (riders === undefined) return undefined;
  let taken: Rider[] | undefined;
  for (const rider of riders) {
    if (rider.taken || (rider.transactional && !inTransaction)) continue;
    rider.taken = true;
    (taken ??= []).push(rider);
  }
  return taken;
}

/** A rider waits in this context, not yet taken, that cannot ride with a COMMIT (asked inside a transaction). */
export function riderWaitingBeforeCommit(): boolean {
  return current.getStore()?.some((rider) => !rider.taken && !rider.atomic) ?? false;
}

/** Whether `err` is atrium_require's: a premise that no longer holds. */
export function isPremiseFailure(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === PREMISE_FAILED;
}

/** Sends the rider by itself if nothing took it, then waits for its check (taken, its outcome as it is). */
export function sendRider(db: Db, rider: Rider): Promise<void> {
  if (rider.taken) return rider.outcome;
  rider.taken = true;
  return db.executeQuery(rider.query).then(
    (result) => rider.settle(result.rows),
    (err: unknown) => rider.settle(err as Error),
  ).then(() => rider.outcome);
}
