// The service's own Prometheus metrics (docs/operating.md#metrics), named once for the process and updated
// where the work happens. Names follow Prometheus conventions: an `atrium_` prefix, base units (seconds),
// `_total` on counters, labels of small fixed sets (an operation id, a method, a status, a result) so a
// series never multiplies with data. Gauges that describe the database (queues, backlog) are read when
// scraped, in database-gauges.ts. Nothing here is served: metrics-listener.ts exposes the registry.
//
// What is updated here is a stand-in until the process serves metrics (METRICS_PORT): prometheus.ts then makes
// the real instruments. Before that an update does nothing and prom-client is not loaded at all, so a process
// without METRICS_PORT pays neither its memory nor a count (docs/operating.md#memory).

type Labels<L extends string> = Partial<Record<L, string | number>>;

export interface Counter<L extends string> {
  inc(labels: Labels<L>): void;
}

export interface Histogram<L extends string> {
  observe(labels: Labels<L>, seconds: number): void;
}

/** How one webhook delivery attempt ended. */
export type DeliveryResult = 'success' | 'http_error' | 'network_error' | 'refused';

export interface Instruments {
  httpRequests: Counter<'operation' | 'method' | 'status'>;
  httpRequestDuration: Histogram<'operation'>;
  webhookDeliveryAttempts: Counter<'result'>;
  mailSent: Counter<'result'>;
}

let live: Instruments | undefined;

/** From now on updates go to these (prometheus.ts, once per process). */
export function useInstruments(instruments: Instruments): void {
  live = instruments;
}

export const httpRequests: Instruments['httpRequests'] = { inc: (labels) => live?.httpRequests.inc(labels) };
export const httpRequestDuration: Instruments['httpRequestDuration'] = { observe: (labels, seconds) => live?.httpRequestDuration.observe(labels, seconds) };
export const webhookDeliveryAttempts: Instruments['webhookDeliveryAttempts'] = { inc: (labels) => live?.webhookDeliveryAttempts.inc(labels) };
export const mailSent: Instruments['mailSent'] = { inc: (labels) => live?.mailSent.inc(labels) };
