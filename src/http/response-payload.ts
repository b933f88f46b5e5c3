// A handler's result as the bytes of the answer, the same for every door (a REST route, an MCP tool call):
// JSON through the operation's success schema, so that only the fields it declares leave the service
// (fast-json-stringify, what Fastify itself compiles a response schema with), then taken back to the caller's
// revision; a file's bytes as they are. Statuses the schema is not declared for are plain JSON.stringify, as
// Fastify answers them.
import fastJsonStringify from 'fast-json-stringify';
import type { Operation } from '../operations/operation.ts';
import type { Revisions } from '../operations/revisions.ts';
import { FIRST_REVISION } from '../operations/revisions.ts';

export interface Payload {
  /** JSON text, a file's bytes (or text a handler answered as such), or nothing (204). */
  payload: string | Buffer | undefined;
  /** `payload` is JSON text, to be sent as `application/json`. */
  json: boolean;
}

const NOTHING: Payload = { payload: undefined, json: false };

/**
 * What an operation's answers are written with: `serialise` the body at the current revision (what the
 * Idempotency-Key record stores, so that a keyed write serialises its answer once, not once to record it and
 * again to send it), `forRevision` that text taken back to the caller's revision, `write` both.
 */
export interface PayloadWriter {
  /** `minimal`: the body is the operation's `return=minimal` answer, written through its own schema. */
  serialise(status: number, body: unknown, minimal?: boolean): Payload;
  forRevision(payload: Payload, status: number, revision: string): Payload;
  write(status: number, body: unknown, revision: string, minimal?: boolean): Payload;
}

export function createPayloadWriter(op: Operation, revisions: Revisions): PayloadWriter {
  const schema = op.success.schema;
  // Compiled with the operation's first answer, not at start (docs/operating.md#memory).
  let stringify: ((body: unknown) => string) | undefined;
  // A `return=minimal` answer (Operation.minimal) has a schema of its own, rather than a union with the full
  // one: fast-json-stringify would test every record against each branch of a union, on every full answer too.
  let stringifyMinimal: ((body: unknown) => string) | undefined;
  const schemaStatuses = new Set([op.success.status, ...(op.success.alsoStatuses ?? [])]);
  // Only operations some revision change touches pay for looking their changes up.
  const touched = revisions.changesSince(FIRST_REVISION, op.id).some((c) => c.downgradeResponse);

  function serialise(status: number, body: unknown, minimal = false): Payload {
    if (body === undefined) return NOTHING;
    if (typeof body === 'string') return { payload: body, json: false };
    if (ArrayBuffer.isView(body)) return { payload: Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength), json: false };
    if (minimal && op.minimal) {
      stringifyMinimal ??= fastJsonStringify(op.minimal.schema as object);
      return { payload: schemaStatuses.has(status) ? stringifyMinimal(body) : JSON.stringify(body), json: true };
    }
    if (schema && stringify === undefined) stringify = fastJsonStringify(schema as object);
    return { payload: stringify && schemaStatuses.has(status) ? stringify(body) : JSON.stringify(body), json: true };
  }

  function forRevision(payload: Payload, status: number, revision: string): Payload {
    // Callers on an earlier revision get a success in their shape, after the allow-list applied.
    if (!touched || !payload.json || status >= 300 || payload.payload === '') return payload;
    const changes = revisions.changesSince(revision, op.id).filter((c) => c.downgradeResponse).reverse();
    if (changes.length === 0) return payload;
    let value = JSON.parse(payload.payload as string);
    for (const change of changes) value = change.downgradeResponse!(value);
    return { payload: JSON.stringify(value), json: true };
  }

  return { serialise, forRevision, write: (status, body, revision, minimal) => forRevision(serialise(status, body, minimal), status, revision) };
}
