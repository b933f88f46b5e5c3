// The service's own Prometheus metrics (docs/operating.md#metrics), defined once for the process and updated
// where the work happens. Names follow Prometheus conventions: an `atrium_` prefix, base units (seconds),
// `_total` on counters, labels of small fixed sets (an operation id, a method, a status, a result) so a
// series never multiplies with data. Gauges that describe the database (queues, backlog) are read when
// scraped, in database-gauges.ts. Nothing here is served: metrics-listener.ts exposes the registry.
import client from 'prom-client';

export const registry = new client.Registry();

/** Seconds; from a cached read (about a millisecond) to the 10 s a request may take before its drain ends. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export const httpRequests = new client.Counter({
  name: 'atrium_http_requests_total',
  help: 'HTTP requests answered, by operation (the OpenAPI operationId, or the route of a page, OAuth or MCP endpoint; "unmatched" for no route), method and status code.',
  labelNames: ['operation', 'method', 'status'] as const,
  registers: [registry],
});

export const httpRequestDuration = new client.Histogram({
  name: 'atrium_http_request_duration_seconds',
  help: 'Time from receiving a request to sending its response, by operation.',
  labelNames: ['operation'] as const,
  buckets: LATENCY_BUCKETS,
  registers: [registry],
});

/** How one webhook delivery attempt ended. */
export type DeliveryResult = 'success' | 'http_error' | 'network_error' | 'refused';

export const webhookDeliveryAttempts = new client.Counter({
  name: 'atrium_webhook_delivery_attempts_total',
  help: 'Webhook delivery attempts made by this process, by result: success (2xx), http_error (any other status), network_error (no answer: timeout, connection refused or reset, TLS), refused (the endpoint failed the SSRF guard).',
  labelNames: ['result'] as const,
  registers: [registry],
});

export const mailSent = new client.Counter({
  name: 'atrium_mail_sent_total',
  help: 'Mails handed over by this process (to SMTP_URL, or to the mail log without it), by result: sent or failed.',
  labelNames: ['result'] as const,
  registers: [registry],
});

/** The standard process and Node.js metrics (CPU, memory, event loop lag, handles), once per process. */
let processMetrics = false;
export function collectProcessMetrics(): void {
  if (processMetrics) return;
  processMetrics = true;
  client.collectDefaultMetrics({ register: registry });
}
