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

export function createPayloadWriter(op: Operation, revisions: Revisions): (status: number, body: unknown, revision: string) => Payload {
  const schema = op.success.schema;
  // Compiled with the operation's first answer, not at start (docs/operating.md#memory).
  let stringify: ((body: unknown) => string) | undefined;
  const schemaStatuses = new Set([op.success.status, ...(op.success.alsoStatuses ?? [])]);
  // Only operations some revision change touches pay for looking their changes up.
  const touched = revisions.changesSince(FIRST_REVISION, op.id).some((c) => c.downgradeResponse);

  return (status, body, revision) => {
    if (body === undefined) return NOTHING;
    if (typeof body === 'string') return { payload: body, json: false };
    if (ArrayBuffer.isView(body)) return { payload: Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength), json: false };
    if (schema && stringify === undefined) stringify = fastJsonStringify(schema as object);
    let text = stringify && schemaStatuses.has(status) ? stringify(body) : JSON.stringify(body);
    // Callers on an earlier revision get a success in their shape, after the allow-list applied.
    if (touched && status < 300 && text !== '') {
      const changes = revisions.changesSince(revision, op.id).filter((c) => c.downgradeResponse).reverse();
      if (changes.length > 0) {
        let value = JSON.parse(text);
        for (const change of changes) value = change.downgradeResponse!(value);
        text = JSON.stringify(value);
      }
    }
    return { payload: text, json: true };
  };
}
