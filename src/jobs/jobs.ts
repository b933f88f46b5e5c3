// Every background job a worker runs, by name. A new kind of background work (webhook delivery, clean-up)
// adds its entry here.
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import type { Job } from './worker.ts';

/** The retention period is counted in days: a pass an hour removes entries within an hour of their end. */
const AUDIT_RETENTION_INTERVAL_MS = 3_600_000;

/** Runs `pass` again at once while it finds work, so a backlog drains without waiting for the interval. */
async function drain(pass: (signal: AbortSignal) => Promise<number>, signal: AbortSignal): Promise<void> {
  while (!signal.aborted && (await pass(signal)) > 0);
}

export function backgroundJobs(services: Services, config: Pick<Config, 'mailPollIntervalMs' | 'webhookPollIntervalMs'>): Job[] {
  return [
    {
      // Fan-out and delivery in one pass: a new event is sent in the pass that finds it, not one interval later.
      name: 'webhooks.deliver',
      intervalMs: config.webhookPollIntervalMs,
      run: (signal) => drain(async (s) => (await services.webhookDelivery.dispatch()) + (await services.webhookDelivery.deliver(s)), signal),
    },
    {
      name: 'email_messages.send_due',
      intervalMs: config.mailPollIntervalMs,
      run: (signal) => services.emailMessages.runDueMessages(undefined, signal),
    },
    {
      // AUDIT_RETENTION_DAYS: the only code that removes audit log entries.
      name: 'audit.retention',
      intervalMs: AUDIT_RETENTION_INTERVAL_MS,
      run: (signal) => services.audit.purgeExpired(signal),
    },
  ];
}
