// Client ID Metadata Documents (docs/authentication.md#oauth-2): a client may name itself by an https URL whose document
// describes it. oidc-provider fetches that document through this function (its `fetch` option), which goes
// through the webhook SSRF guard — https only, public addresses only unless WEBHOOK_ALLOW_HOSTS lets a host
// through, WEBHOOK_CA_FILE trusted — and connects to the very address the guard checked. No redirects are
// followed; the answer is cut at 64 KiB (oidc-provider itself refuses documents over 5 KiB).
import https from 'node:https';
import net from 'node:net';
import tls from 'node:tls';
import type { EndpointGuard } from '../../net/endpoint-guard.ts';

const MAX_BYTES = 64 * 1024;
const TIMEOUT_MS = 5000;

export function createMetadataDocumentFetch(deps: { guard: EndpointGuard; ca: string[] | undefined }) {
  const secureContext = deps.ca ? tls.createSecureContext({ ca: deps.ca }) : undefined;

  return async function fetchMetadataDocument(url: string | URL, options: { signal?: AbortSignal | null } = {}): Promise<Response> {
    const endpoint = await deps.guard.resolve(String(url));
    const hostname = endpoint.url.hostname.replace(/^\[|\]$/g, '');
    return new Promise((resolve, reject) => {
      const request = https.request(
        {
          host: endpoint.address,
          family: endpoint.family,
          port: endpoint.url.port || 443,
          path: `${endpoint.url.pathname}${endpoint.url.search}`,
          servername: net.isIP(hostname) ? '' : hostname,
          method: 'GET',
          headers: { host: endpoint.url.host, accept: 'application/json', 'user-agent': 'Atrium-OAuth/1' },
          ...(secureContext ? { secureContext } : {}),
          timeout: TIMEOUT_MS,
          ...(options.signal ? { signal: options.signal } : {}),
        },
        (response) => {
          const chunks: Buffer[] = [];
          let size = 0;
          response.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_BYTES) request.destroy(new Error('the client metadata document is too large'));
            else chunks.push(chunk);
          });
          response.on('end', () => {
            const headers = new Headers();
            for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers.set(name, value);
            resolve(new Response(Buffer.concat(chunks), { status: response.statusCode ?? 502, headers }));
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () => request.destroy(new Error(`no answer within ${TIMEOUT_MS} ms`)));
      request.on('error', reject);
      request.end();
    });
  };
}

export type MetadataDocumentFetch = ReturnType<typeof createMetadataDocumentFetch>;
