// The real instruments behind instruments.ts and the registry the metrics listener serves, made when the
// process starts serving metrics (METRICS_PORT): this module, and prom-client with it, is imported then and only
// then (main.ts).
import client from 'prom-client';
import { useInstruments } from './instruments.ts';

export const registry = new client.Registry();

/** Seconds; from a cached read (about a millisecond) to the 10 s a request may take before its drain ends. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let collecting = false;

/** Counts from now on: the instruments of instruments.ts, and the standard process and Node.js metrics (CPU, memory, event loop lag, handles). Once per process. */
export function collectMetrics(): void {
  if (collecting) return;
  collecting = true;
  useInstruments({
    httpRequests: new client.Counter({
      name: 'atrium_http_requests_total',
      help: 'HTTP requests answered, by operation (the OpenAPI operationId, or the route of a page, OAuth or MCP endpoint; "unmatched" for no route), method and status code.',
      labelNames: ['operation', 'method', 'status'] as const,
      registers: [registry],
    }),
    httpRequestDuration: new client.Histogram({
      name: 'atrium_http_request_duration_seconds',
      help: 'Time from receiving a request to sending its response, by operation.',
      labelNames: ['operation'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    }),
    webhookDeliveryAttempts: new client.Counter({
      name: 'atrium_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts made by this process, by result: success (2xx), http_error (any other status), network_error (no answer: timeout, connection refused or reset, TLS), refused (the endpoint failed the SSRF guard).',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    mailSent: new client.Counter({
      name: 'atrium_mail_sent_total',
      help: 'Mails handed over by this process (to SMTP_URL, or to the mail log without it), by result: sent or failed.',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
  });
  client.collectDefaultMetrics({ register: registry });
}
