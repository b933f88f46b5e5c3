// The PostgreSQL pool, made to survive its database going away (docs/operating.md#starting-losing-the-database-stopping):
// - every connection has an `error` listener from the moment it exists, so a dropped connection ("Connection
//   terminated unexpectedly") is logged instead of ending the process as an unhandled `error` event;
// - connecting and each query are bounded in time, so a request answers 502 within 5 s when packets are
//   simply lost, instead of hanging;
// - a connection that failed that way is destroyed when it is handed back, never lent out again (after a
//   timed-out query node-postgres would otherwise queue the next query behind the lost one);
// - once PostgreSQL refused a prepared statement as outdated by a migration (outdated-plans.ts), no connection
//   lent before is lent again: each would fail the same way.
import type net from 'node:net';
import pg from 'pg';
import { queryOn } from './pg-shaped-query.ts';
import type { PostgresPool, PostgresPoolClient } from 'kysely';
import { isDatabaseUnavailable } from './availability.ts';
import { isStalePreparedStatement } from './outdated-plans.ts';

/** Waiting for a connection (a new one, or a free one from a busy pool). */
export const CONNECT_TIMEOUT_MS = 2_500;
/** One query, measured by the client: it also covers a server that no longer answers at all. */
export const QUERY_TIMEOUT_MS = 4_000;

export interface GuardedPoolOptions extends pg.PoolConfig {
  /** Told about every connection that failed (an operator wants it in the log). */
  onConnectionError?: (err: Error) => void;
  /** Off for migrations, whose statements may rightly run longer than a request's. */
  timeouts?: boolean;
}

class GuardedClient implements PostgresPoolClient {
  readonly #client: pg.PoolClient;
  readonly #plans: PlanGenerations;
  /** The pool's plan generation when this connection was first lent: it has parsed nothing older. */
  readonly generation: number;
  #broken: Error | undefined;
  constructor(client: pg.PoolClient, plans: PlanGenerations) {
    this.#client = client;
    this.#plans = plans;
    this.generation = plans.current;
  }
  query(...args: unknown[]): any {
    // A statement's config (postgres-driver.ts) goes through pg-shaped-query.ts; anything else as given.
    const [config] = args;
    const statement = args.length === 1 && typeof config === 'object' && config !== null && typeof (config as { submit?: unknown }).submit !== 'function';
    const result = statement ? queryOn(this.#client, config as pg.QueryConfig) : (this.#client.query as (...a: unknown[]) => unknown)(...args);
    if (!(result instanceof Promise)) return result; // a cursor
    return result.catch((err: Error) => {
      if (isDatabaseUnavailable(err)) this.#broken = err;
      if (isStalePreparedStatement(err)) {
        this.#broken = err;
        // Every connection lent so far parsed its statements before the migration, not only this one.
        this.#plans.outdated(this.generation);
      }
      throw err;
    });
  }
  /** The connection's socket: postgres-driver.ts corks it to send several statements in one write. */
  get stream(): net.Socket {
    return (this.#client as unknown as { connection: { stream: net.Socket } }).connection.stream;
  }
  release(destroy?: boolean): void {
    const broken = this.#broken;
    this.#broken = undefined;
    this.#client.release(broken ?? (destroy ? true : undefined));
  }
}

/**
 * Which connections may have parsed a statement a migration has since outdated (outdated-plans.ts): those
 * first lent before the last refusal was seen. They are destroyed instead of lent again, so that a transaction
 * that runs again after a refusal (againIfPlansOutdated) runs on a connection that parsed nothing before it.
 */
interface PlanGenerations {
  readonly current: number;
  outdated(generation: number): void;
}

/** A pool's connections now, for the metrics (src/metrics/database-gauges.ts). */
export interface PoolStats {
  total: number;
  idle: number;
  waiting: number;
  max: number;
}

export function createGuardedPool(options: GuardedPoolOptions): PostgresPool & { stats(): PoolStats } {
  const { onConnectionError = () => {}, timeouts = true, ...config } = options;
  const pool = new pg.Pool({
    ...config,
    keepAlive: true,
    ...(timeouts ? { connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS } : {}),
  });
  // The pool re-emits errors of idle connections; each connection's own listener below has logged them.
  pool.on('error', () => {});
  pool.on('connect', (client) => client.on('error', onConnectionError));
  // One wrapper per connection, so that Kysely (which keys its connection state by client) sees one object.
  const guarded = new WeakMap<pg.PoolClient, GuardedClient>();
  const plans = {
    current: 0,
    outdated(generation: number) {
      // The refusals of one migration, seen on several connections at once, start one generation.
      if (generation === this.current) this.current++;
    },
  };
  return {
    options: pool.options,
    Client: (pool as unknown as { Client: PostgresPool['Client'] }).Client,
    async connect() {
      for (;;) {
        const client = await pool.connect();
        let g = guarded.get(client);
        if (!g) {
          g = new GuardedClient(client, plans);
          guarded.set(client, g);
        }
        if (g.generation === plans.current) return g;
        client.release(true);
      }
    },
    end: () => pool.end(),
    stats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 }),
  };
}
