// A tool call runs as its operation's REST request, dispatched inside this process with app.inject(): the same
// route, so the same hooks (tenancy, authentication, scope and capability, entitlement, rate limits, revision,
// idempotency, transaction, events) and the same answer. The answer becomes the tool result: the JSON response
// as structuredContent and as text; a problem document as an isError result carrying it.
import type { FastifyInstance } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import type { RestRequest } from './tool-arguments.ts';

export interface RestResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: Buffer;
}

export async function dispatchRest(app: FastifyInstance, org: Organisation, request: RestRequest, headers: { authorization: string; revision: string }): Promise<RestResponse> {
  const res = await app.inject({
    method: request.method,
    url: request.url,
    headers: {
      host: org.address,
      authorization: headers.authorization,
      // Tools describe the current revision's shapes, so they run at it, whatever the credential is pinned to.
      'service-version': headers.revision,
      ...(request.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(request.idempotencyKey !== undefined ? { 'idempotency-key': request.idempotencyKey } : {}),
    },
    ...(request.body !== undefined ? { payload: request.body } : {}),
    // The options are built here, not given by a caller: light-my-request need not check them on every call.
    validate: false,
  });
  return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
}

const header = (response: RestResponse, name: string): string | undefined => {
  const value = response.headers[name];
  return value === undefined ? undefined : String(value);
};

/** The REST answer as a tool result; `_meta` keeps what only headers said (status, request id, replay). */
export function toolResult(response: RestResponse): CallToolResult {
  const _meta = {
    'atrium/status': response.status,
    'atrium/request_id': header(response, 'request-id') ?? null,
    ...(header(response, 'idempotency-replayed') === 'true' ? { 'atrium/idempotency_replayed': true } : {}),
  };
  const type = header(response, 'content-type') ?? '';
  const text = response.body.toString('utf8');
  if (/json/.test(type) && text !== '') {
    const value = JSON.parse(text) as unknown;
    const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
    return { content: [{ type: 'text', text }], structuredContent: structured, ...(response.status >= 400 ? { isError: true } : {}), _meta };
  }
  if (response.body.length === 0) return { content: [{ type: 'text', text: `Done (HTTP ${response.status}, no content).` }], _meta };
  // A file's bytes: as the upload tool takes them.
  const file = { content_type: type || 'application/octet-stream', content_base64: response.body.toString('base64') };
  return { content: [{ type: 'text', text: JSON.stringify(file) }], structuredContent: file, _meta };
}
