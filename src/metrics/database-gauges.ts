// Gauges read from the database when Prometheus scrapes: the work waiting in the shared queues (outbox,
// webhook deliveries, scheduled mail) and this process's connection pool. The queues belong to the whole
// deployment, so every process reports the same values: aggregate them with max(), not sum(). One scrape
// runs the queries once (each is an index range scan), whatever number of gauges asks for them; if the
// database does not answer, `atrium_database_up` is 0 and the queue gauges are left out of that scrape.
import client from 'prom-client';
import { sql } from 'kysely';
import { type Clock, nowIso } from '../clock.ts';
import type { Database } from '../db/database.ts';
import { registry } from './prometheus.ts';

interface QueueSnapshot {
  outboxPending: number;
  outboxOldest: string | null;
  deliveriesPending: number;
  deliveriesOldestDue: string | null;
  mailDue: number;
  mailSending: number;
  mailOldestDue: string | null;
}

async function readQueues(database: Database, now: string): Promise<QueueSnapshot> {
  const { db } = database;
  const [outbox, deliveries, mail] = await Promise.all([
    db.selectFrom('outbox_events').where('dispatched_at', 'is', null).select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('occurred_at').as('oldest')]).executeTakeFirstOrThrow(),
    db
      .selectFrom('webhook_deliveries')
      .where('status', '=', 'pending')
      .select((eb) => [eb.fn.countAll<number>().as('n'), sql<string | null>`min(case when ${eb.ref('next_attempt_at')} <= ${now} then ${eb.ref('next_attempt_at')} end)`.as('oldest_due')])
      .executeTakeFirstOrThrow(),
    db
      .selectFrom('email_messages')
      .where((eb) => eb.or([eb('status', '=', 'sending'), eb.and([eb('status', '=', 'scheduled'), eb('send_at', '<=', now)])]))
      .select((eb) => [
        sql<number>`sum(case when ${eb.ref('status')} = 'sending' then 1 else 0 end)`.as('sending'),
        sql<number>`sum(case when ${eb.ref('status')} = 'scheduled' then 1 else 0 end)`.as('due'),
        sql<string | null>`min(case when ${eb.ref('status')} = 'scheduled' then ${eb.ref('send_at')} end)`.as('oldest_due'),
      ])
      .executeTakeFirstOrThrow(),
  ]);
  return {
    outboxPending: Number(outbox.n),
    outboxOldest: outbox.oldest as string | null,
    deliveriesPending: Number(deliveries.n),
    deliveriesOldestDue: deliveries.oldest_due,
    mailDue: Number(mail.due ?? 0),
    mailSending: Number(mail.sending ?? 0),
    mailOldestDue: mail.oldest_due,
  };
}

/** Registers the database gauges of one process; call once, when its database is opened. */
export function registerDatabaseGauges(database: Database, clock: Clock): void {
  // The queries of one scrape, shared by every gauge that collects during it.
  let scrape: Promise<QueueSnapshot | undefined> | undefined;
  const snapshot = () => {
    scrape ??= readQueues(database, nowIso(clock))
      .catch(() => undefined)
      .finally(() => setImmediate(() => (scrape = undefined)));
    return scrape;
  };
  const ageSeconds = (since: string | null) => (since === null ? 0 : Math.max(0, (clock.now().getTime() - Date.parse(since)) / 1000));
  /** A gauge set at each scrape from what `read` gives; left out of a scrape where `read` gives nothing. */
  const gaugeOf =
    <S>(read: () => S | undefined | Promise<S | undefined>) =>
    <L extends string>(name: string, help: string, labelNames: readonly L[], set: (g: client.Gauge<L>, s: S) => void) =>
      new client.Gauge<L>({
        name,
        help,
        labelNames,
        registers: [registry],
        async collect() {
          this.reset();
          const s = await read();
          if (s !== undefined) set(this, s);
        },
      });
  const gauge = gaugeOf(snapshot);

  new client.Gauge({
    name: 'atrium_database_up',
    help: 'Whether the database answered the queries of this scrape (1) or not (0).',
    registers: [registry],
    async collect() {
      this.set((await snapshot()) ? 1 : 0);
    },
  });
  gauge('atrium_outbox_events_pending', 'Events recorded but not yet fanned out to webhook subscriptions (the outbox backlog).', [], (g, s) => g.set(s.outboxPending));
  gauge('atrium_outbox_oldest_pending_age_seconds', 'Age of the oldest event not yet fanned out; 0 when none waits.', [], (g, s) => g.set(ageSeconds(s.outboxOldest)));
  gauge('atrium_webhook_deliveries_pending', 'Webhook deliveries not yet succeeded or given up: due now, waiting for a retry, or being sent.', [], (g, s) => g.set(s.deliveriesPending));
  gauge('atrium_webhook_queue_lag_seconds', 'How long the oldest due webhook delivery has been waiting past its due time; 0 when none is late.', [], (g, s) => g.set(ageSeconds(s.deliveriesOldestDue)));
  gauge('atrium_mail_queue_messages', 'Email messages waiting to be sent, by state: due (scheduled time reached, not started) or sending.', ['state'] as const, (g, s) => {
    g.set({ state: 'due' }, s.mailDue);
    g.set({ state: 'sending' }, s.mailSending);
  });
  gauge('atrium_mail_queue_lag_seconds', 'How long the oldest due email message has been waiting past its send time; 0 when none is late.', [], (g, s) => g.set(ageSeconds(s.mailOldestDue)));

  const pool = database.poolStats;
  if (!pool) return;
  // The pool of pg-pool.ts; the driver's shared read and write connections (shared-connections.ts) are not in it.
  const poolGauge = gaugeOf(pool);
  poolGauge('atrium_db_pool_connections', "This process's pooled PostgreSQL connections, by state: idle or in_use.", ['state'] as const, (g, p) => {
    g.set({ state: 'idle' }, p.idle);
    g.set({ state: 'in_use' }, p.total - p.idle);
  });
  poolGauge('atrium_db_pool_waiting_requests', 'Queries of this process waiting for a free pooled PostgreSQL connection.', [], (g, p) => g.set(p.waiting));
  poolGauge('atrium_db_pool_max_connections', "The size of this process's PostgreSQL connection pool.", [], (g, p) => g.set(p.max));
}
