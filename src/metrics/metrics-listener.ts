// The metrics listener (docs/operating.md#metrics): `GET /metrics` in the Prometheus text format on its own
// port (METRICS_PORT), never on an organisation's address, so the API's proxy does not expose it and a scrape
// needs no credential. Bind it to an address only the monitoring system reaches (METRICS_HOST).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { registry } from './prometheus.ts';

export interface MetricsListener {
  /** `http://host:port` it listens on. */
  readonly url: string;
  close(): Promise<void>;
}

async function answer(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
  const path = (request.url ?? '').split('?')[0];
  if (path !== '/metrics') {
    response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('Not found: metrics are at /metrics.\n');
    return;
  }
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    response.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' }).end('Method not allowed.\n');
    return;
  }
  try {
    const body = await registry.metrics();
    response.writeHead(200, { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' }).end(request.method === 'HEAD' ? undefined : body);
  } catch {
    response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end('The metrics could not be collected.\n');
  }
}

export async function openMetricsListener(options: { host: string; port: number }): Promise<MetricsListener> {
  const server = http.createServer((request, response) => void answer(request, response));
  // A scrape connection left open must not hold the process at shutdown.
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
