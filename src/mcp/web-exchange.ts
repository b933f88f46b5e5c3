// The /mcp request as the SDK's web-standard handler takes it (`handler.fetch(Request)`), and its `Response`
// written back to Node's: what the SDK's Node adapter (toNodeHandler, in @modelcontextprotocol/node, no longer
// a dependency) does, in two halves, so that /mcp can look at the answer before anything is sent
// (mcp-routes.ts: a tool call that ran on a stale organisation is run again, or refused, and its first answer
// dropped); and lighter: the request carries only the headers the SDK reads, and no body at all: the SDK is
// handed the message already parsed (`parsedBody`), and then never reads one (a body made a web stream, its
// controller and a copy of the bytes on every call).
import type { ServerResponse } from 'node:http';
import type { FastifyRequest } from 'fastify';

/** The request headers the SDK reads: content negotiation, the protocol revision and its routing headers, the 2025 session ones. */
const FORWARDED_HEADERS = ['content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name', 'mcp-session-id', 'last-event-id'] as const;

/**
 * The web `Request` for the SDK, without a body: a POST's message goes to the SDK parsed, as `parsedBody`
 * (mcp-routes.ts). `signal` aborts when the client goes away (it ends an open event stream); without one, what
 * the exchange opened is ended by closing its server instead (endWhenClientGoes).
 */
export function webRequestOf(request: FastifyRequest, signal: AbortSignal | undefined): Request {
  const headers = new Headers();
  for (const name of FORWARDED_HEADERS) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return new Request(`http://${request.headers.host ?? 'localhost'}${request.url}`, { method: request.method, headers, ...(signal ? { signal } : {}) });
}

/**
 * When the client goes away before the answer is written: `abort` fires (the signal of a `Request` given one,
 * and writeWebResponse's loop), and each server made for the exchange is closed, which ends its exchange as the
 * signal would have (the SDK's per-request transport closes on either, and its pending answer becomes a 499 that
 * nobody reads). Once the whole answer was handed to Node (`writableEnded`) there is nothing left to end, whether
 * or not the socket has flushed it yet (an aborted signal costs a DOMException with its stack; app.inject's
 * replies never flush).
 *
 * Why a 2026-07-28 tools/call's `Request` carries no signal: undici's `Request` follows a signal given to it
 * through a listener, a WeakRef and a FinalizationRegistry entry, about 4 % of a tool call's CPU (bench/README.md);
 * its server, closed here, is the only thing the signal would have ended.
 */
export function endWhenClientGoes(res: ServerResponse, abort: AbortController, servers: ReadonlyArray<{ close(): Promise<void> }>): void {
  res.once('close', () => {
    if (res.writableEnded) return;
    abort.abort();
    for (const server of servers) server.close().catch(() => {});
  });
}

export const isEventStream = (response: Response) => response.headers.get('content-type')?.startsWith('text/event-stream') === true;

/** The same answer with its body read to the end: for an event stream, once the exchange is over. */
export async function buffered(response: Response): Promise<Response> {
  return new Response(await response.arrayBuffer(), { status: response.status, headers: response.headers });
}

/** Header names as Node's `getHeaders()` gives them (lower case), and their values. */
type HeldHeaders = Record<string, number | string | string[] | undefined>;

/**
 * Writes the SDK's answer: its status, the headers `held` for the reply so far (Fastify's: the request id, CORS,
 * the rate limit's) under the SDK's own, in one `writeHead` (Node checks each header once, not once when set and
 * again when written), then its body: a JSON answer whole, with its Content-Length; an event stream as it comes,
 * with back-pressure. `abort` is the request's: fired when the client goes away first.
 */
export async function writeWebResponse(response: Response, res: ServerResponse, abort: AbortController, held: HeldHeaders = {}): Promise<void> {
  const headers: Record<string, number | string | string[]> = {};
  for (const name in held) {
    const value = held[name];
    if (value !== undefined) headers[name] = value;
  }
  for (const [name, value] of response.headers) headers[name] = value;
  if (response.body !== null && !isEventStream(response)) {
    // The whole answer is here before anything is written: sent with its length, not in chunks.
    const body = Buffer.from(await response.arrayBuffer());
    headers['content-length'] = body.length;
    res.writeHead(response.status, headers).end(body);
    return;
  }
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  const closed = new Promise<void>((resolve) => abort.signal.addEventListener('abort', () => resolve(), { once: true }));
  try {
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      if (abort.signal.aborted) break;
      if (!res.write(chunk)) await Promise.race([new Promise((resolve) => res.once('drain', resolve)), closed]);
    }
  } catch {
    // The stream was cancelled (the client went away): nothing more to write.
  }
  res.end();
}
