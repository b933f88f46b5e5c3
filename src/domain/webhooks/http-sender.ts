// One HTTPS POST to a webhook endpoint, connected to the address the endpoint guard checked (never a fresh
// DNS answer), with a hard timeout, no redirects followed, and a truncated response body for the log.
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { ResolvedEndpoint } from '../../net/endpoint-guard.ts';

export const RESPONSE_BODY_LOG_LIMIT = 2048;

export interface SendResult {
  statusCode: number | null;
  /** Seconds, from a Retry-After header (429/503). */
  retryAfter: number | null;
  responseBody: string | null;
  error: string | null;
  durationMs: number;
}

function parseRetryAfter(value: string | string[] | undefined): number | null {
  if (typeof value !== 'string') return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/**
 * Node's https.Agent names its connection pools by every TLS option, the whole `ca` list included: with the
 * system roots plus an operator's CA that string is rebuilt on each request (measured: a fifth of the
 * worker's CPU). All our requests share one set of TLS options, so the pool is named by where it connects.
 */
class EndpointAgent extends https.Agent {
  override getName(options: https.RequestOptions & { servername?: string }): string {
    // The host name checked against the certificate is part of the name: a connection verified for one host
    // is never reused for another that happens to share its address.
    return `${options.host}:${options.port}:${options.servername || ''}`;
  }
}

export function createHttpSender(options: { ca?: string[]; agent?: https.Agent }) {
  // Keep-alive connections per endpoint: deliveries to one receiver reuse TLS sessions.
  // One TLS context for every connection (building one per connection from ~150 root certificates is costly).
  const secureContext = options.ca ? tls.createSecureContext({ ca: options.ca }) : undefined;
  const agent = options.agent ?? new EndpointAgent({ keepAlive: true, maxSockets: 32, ...(secureContext ? { secureContext } : {}) });

  /** `signal` (a worker stopping) abandons the attempt: it ends with an error and no status code. */
  return function send(endpoint: ResolvedEndpoint, headers: Record<string, string>, body: string, timeoutMs: number, signal?: AbortSignal): Promise<SendResult> {
    const started = performance.now();
    // The connection goes to the checked address; the certificate is checked against the URL's host name.
    const hostname = endpoint.url.hostname.replace(/^\[|\]$/g, '');
    const isIpLiteral = net.isIP(hostname) !== 0;
    return new Promise((resolve) => {
      let settled = false;
      const finish = (result: Omit<SendResult, 'durationMs'>) => {
        if (settled) return;
        settled = true;
        resolve({ ...result, durationMs: Math.round(performance.now() - started) });
      };
      const request = https.request(
        {
          protocol: 'https:',
          host: endpoint.address,
          family: endpoint.family,
          port: endpoint.url.port || 443,
          path: `${endpoint.url.pathname}${endpoint.url.search}`,
          // The certificate is checked against `servername || host`: the URL's host name, or for an IP-literal
          // URL (no SNI) the address itself, which is then that literal. A per-request checkServerIdentity
          // would do the same but stops Node's agent from reusing the connection (measured: a new TLS
          // handshake for every delivery).
          servername: isIpLiteral ? '' : hostname,
          method: 'POST',
          agent,
          headers: {
            host: endpoint.url.host, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'Atrium-Webhooks/1', ...headers },
          timeout: timeoutMs,
          ...(signal ? { signal } : {}),
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            if (size < RESPONSE_BODY_LOG_LIMIT) chunks.push(chunk);
            size += chunk.length;
          });
          response.on('end', () =>
            finish({
              statusCode: response.statusCode ?? null,
              retryAfter: parseRetryAfter(response.headers['retry-after']),
              responseBody: Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_BODY_LOG_LIMIT),
              error: null,
            }),
          );
          response.on('error', (err) => finish({ statusCode: response.statusCode ?? null, retryAfter: null, responseBody: null, error: err.message }));
        },
      );
      request.on('timeout', () => {
        request.destroy(new Error(`no answer within ${timeoutMs} ms`));
      });
      request.on('error', (err) => finish({ statusCode: null, retryAfter: null, responseBody: null, error: err.message }));
      request.end(body);
    });
  };
}

export type HttpSender = ReturnType<typeof createHttpSender>;
