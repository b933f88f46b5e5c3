// The one place request bodies are read (docs/conventions.md#errors — the status table is exhaustive).
// Only `application/json` in UTF-8 is a body; anything else is a 422 `request.unsupported_media_type`. Text
// that is not JSON is a 422 `request.malformed_json`. JSON nested deeper than 64 levels is a 422
// `request.too_deep`, so no later step (validation, the idempotency fingerprint, storing it) can exhaust the
// stack on it. A `__proto__` or `constructor` key is an unknown field at its pointer, never merged into an
// object: JSON.parse makes such keys plain own properties, and this check keeps them from travelling further.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, type FieldError } from '../errors/api-error.ts';

export const MAX_JSON_DEPTH = 64;
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor']);

const pointerSegment = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');

interface Pending {
  value: unknown;
  pointer: string;
  depth: number;
}

/**
 * Walks the parsed value without recursion (a body of the size limit can nest hundreds of thousands of
 * levels): the first container deeper than the limit, and every forbidden key.
 */
function inspect(root: unknown): { tooDeepAt?: string; forbidden: FieldError[] } {
  const forbidden: FieldError[] = [];
  const stack: Pending[] = [{ value: root, pointer: '', depth: 0 }];
  while (stack.length > 0) {
    const { value, pointer, depth } = stack.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth + 1 > MAX_JSON_DEPTH) return { tooDeepAt: pointer, forbidden };
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], pointer: `${pointer}/${i}`, depth: depth + 1 });
      continue;
    }
    const keys = Object.keys(value);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i];
      const at = `${pointer}/${pointerSegment(key)}`;
      if (FORBIDDEN_KEYS.has(key)) {
        forbidden.push({ path: at, code: 'unknown_field', detail: `\`${key}\` is not a known field.` });
        continue;
      }
      stack.push({ value: (value as Record<string, unknown>)[key], pointer: at, depth: depth + 1 });
    }
  }
  return { forbidden };
}

/** The same walk without building pointers, for the common case that nothing is wrong (a fifth of the cost). */
function isPlain(root: unknown): boolean {
  const values: unknown[] = [root];
  const depths: number[] = [0];
  while (values.length > 0) {
    const value = values.pop();
    const depth = depths.pop()!;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= MAX_JSON_DEPTH) return false;
    if (Array.isArray(value)) {
      for (const item of value) if (item !== null && typeof item === 'object') values.push(item), depths.push(depth + 1);
      continue;
    }
    if (Object.hasOwn(value, '__proto__') || Object.hasOwn(value, 'constructor')) return false;
    for (const key in value) {
      const item = (value as Record<string, unknown>)[key];
      if (item !== null && typeof item === 'object') values.push(item), depths.push(depth + 1);
    }
  }
  return true;
}

/** The body as JSON, or the 422 that says why it is not one we accept. */
export function parseJsonBody(text: string): unknown {
  if (text.trim() === '') throw new ApiError('request.body_required', 'The body is empty but Content-Type says JSON.');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ApiError('request.malformed_json', 'The request body is not valid JSON.');
  }
  return checkJsonValue(value);
}

/** A parsed JSON value, or the 422 that says why it is not one we accept (too deep, a forbidden key). */
export function checkJsonValue(value: unknown): unknown {
  if (isPlain(value)) return value;
  const { tooDeepAt, forbidden } = inspect(value);
  if (tooDeepAt !== undefined) {
    const detail = `JSON may nest at most ${MAX_JSON_DEPTH} levels of arrays and objects.`;
    throw new ApiError('request.too_deep', `The request body is nested too deeply: ${detail}`, { errors: [{ path: tooDeepAt, code: 'too_deep', detail }] });
  }
  if (forbidden.length > 0) throw new ApiError('validation.invalid_body', 'The request body is invalid; see `errors`.', { errors: forbidden });
  return value;
}

const UTF8 = /^utf-?8$/i;

function charsetOf(contentType: string | undefined): string | undefined {
  return /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType ?? '')?.[1];
}

/** Replaces Fastify's body parsers: JSON only (spec: Conventions — Format), read and checked as above. */
export function registerBodyParser(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && !UTF8.test(charset)) {
      done(new ApiError('request.unsupported_media_type', 'Send request bodies as `Content-Type: application/json` in UTF-8.'));
      return;
    }
    try {
      done(null, parseJsonBody(typeof body === 'string' ? body : body.toString('utf8')));
    } catch (err) {
      done(err as Error);
    }
  });
}
