// Bad requests for the property-based suite (test/fuzz.test.ts): a case names an operation of the registry
// and one mutation of the valid request test/support/examples.ts builds for it. A case is plain JSON, so a
// failing one can be pasted into test/fuzz-regressions.test.ts as it is. Large and deep values are written
// as markers (`{"$deep": 100000}`) that are expanded only when the request is built.
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { Operation } from '../../src/operations/operation.ts';

/** A JSON value, or a marker: `$deep` nested arrays, a `$long` string, an `$array` of that many items, `$foreign` an id of another organisation. */
export type FuzzValue = unknown;

export type Mutation =
  | { kind: 'none' }
  | { kind: 'set'; at: number; value: FuzzValue } // a member of the body (by index among its pointers), or an unknown one under it
  | { kind: 'add'; at: number; name: string; value: FuzzValue }
  | { kind: 'remove'; at: number }
  | { kind: 'body'; text: string } // the whole body text
  | { kind: 'proto'; key: '__proto__' | 'constructor' }
  | { kind: 'content-type'; value: string | null }
  | { kind: 'segment'; at: number; value: string } // a path segment, as sent (already encoded)
  | { kind: 'query'; name: string; value: string }
  | { kind: 'header'; name: string; value: string }
  | { kind: 'credential'; which: 'none' | 'garbage' | 'stranger' | 'no-scopes' | 'no-api-plan' }
  | { kind: 'foreign-resource' };

export interface FuzzCase {
  operation: string;
  mutation: Mutation;
}

/** What a case becomes on the wire. `json` is the body as sent, parsed, when it is JSON (for pointer checks). */
export interface BuiltRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
  json?: unknown;
  /** The pointer a body mutation changed, if any. */
  pointer?: string;
}

// ---------------------------------------------------------------- generation

const strange = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '😀',
  '\u202e\u0645\u0631\u062d\u0628\u0627',
  'e\u0301\u0301\u0301',
  '\ud800',
  '\uffff',
  '<script>alert(1)</script>',
  "'; drop table sections; --",
  '../../etc/passwd',
  '%00',
  'ext:x',
  '2026-11-01T00:00:00Z',
  'not-a-uuid',
  '00000000-0000-0000-0000-000000000000',
);
const text = fc.oneof(strange, fc.string({ unit: 'binary', maxLength: 40 }), fc.constantFrom({ $long: 256 }, { $long: 2001 }, { $long: 70_000 }));
const numbers = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -1, 1e308, -1e308, 2 ** 53 + 2, 9007199254740993, 0.5, -0));
const markers = fc.constantFrom({ $deep: 65 }, { $deep: 2_000 }, { $deep: 200_000 }, { $array: 600 }, { $foreign: true });
export const fuzzValue: fc.Arbitrary<FuzzValue> = fc.oneof(
  { weight: 3, arbitrary: text },
  { weight: 2, arbitrary: numbers },
  { weight: 1, arbitrary: fc.constantFrom(true, false, null, {}, [], { a: 1 }, [1, 'x']) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 2, arbitrary: markers },
);

const badBodies = fc.constantFrom(
  '{',
  '{"a":',
  '[]',
  'null',
  '"text"',
  '123',
  '{"a":1}trailing',
  "{'single':'quotes'}",
  '{"a":1,}',
  '\ufeff{}',
  '{"a":"\\u00"}',
  '{"a":"\\ud800"}',
  '['.repeat(100_000) + ']'.repeat(100_000),
  '{"a":' + '{"b":'.repeat(70) + '1' + '}'.repeat(70) + '}',
  ' ',
);
const contentTypes = fc.constantFrom(
  null,
  '',
  'text/plain',
  'application/xml',
  'application/json; charset=utf-16',
  'application/json; charset=latin1',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json-patch+json',
  'APPLICATION/JSON',
  'application/json;charset=UTF-8',
);
const segments = fc.oneof(
  fc.constantFrom('not-a-uuid', '01A1FFB1-EF6F-770B-BA7C-B487911C9252', '00000000-0000-0000-0000-000000000000', 'ext:', 'ext:%00', '%00', '..', '%2e%2e', '%ZZ', '%', 'ext:a%2Fb', 'x'.repeat(1_100), 'ext:' + 'y'.repeat(300), '%F0%9F%98%80'),
  fc.uuid().map((u) => u),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);
const queryNames = (op: Operation) => [...Object.keys((op.query as { properties?: object } | undefined)?.properties ?? {}), 'unknown', 'limit', '__proto__'];
const queryValues = fc.oneof(
  fc.constantFrom('-1', '0', '201', '1e9', 'abc', '', '%00', 'true', 'maybe', '2026-13-45', 'x'.repeat(5_000), '%E2%80%AE', 'forged-cursor', '1&limit=2'),
  fc.string({ maxLength: 20 }).map(encodeURIComponent),
);
const headers = fc.oneof(
  fc.record({ name: fc.constant('idempotency-key'), value: fc.constantFrom('', 'k'.repeat(256), 'cl\u00e9', ' ', 'k') }),
  fc.record({ name: fc.constant('service-version'), value: fc.constantFrom('garbage', '2026-02-30', '9999-12-31', '2025-01-01', '2026-11-01T00:00:00Z', '') }),
  fc.record({ name: fc.constant('authorization'), value: fc.constantFrom('Bearer', 'Basic eDp5', 'Bearer ' + 'a'.repeat(5_000), 'bearer  atr_live_x', 'Bearer atr_test_\u00e9') }),
  fc.record({ name: fc.constantFrom('accept', 'x-forwarded-host', 'content-encoding', 'transfer-encoding'), value: fc.constantFrom('text/html', 'evil.test', 'gzip', 'x') }),
);

export function fuzzCase(operations: Operation[]): fc.Arbitrary<FuzzCase> {
  return fc.constantFrom(...operations).chain((op) => {
    const mutation: fc.Arbitrary<Mutation> = fc.oneof(
      { weight: 1, arbitrary: fc.constant({ kind: 'none' as const }) },
      { weight: 6, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), value: fuzzValue }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('add' as const), at: fc.nat(), name: fc.constantFrom('unknown_field', 'id', 'created_at', '', '~/'), value: fuzzValue }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('remove' as const), at: fc.nat() }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('body' as const), text: badBodies }) },
      { weight: 1, arbitrary: fc.record({ kind: fc.constant('proto' as const), key: fc.constantFrom('__proto__' as const, 'constructor' as const) }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('content-type' as const), value: contentTypes }) },
      { weight: 3, arbitrary: fc.record({ kind: fc.constant('segment' as const), at: fc.nat(), value: segments }) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('query' as const), name: fc.constantFrom(...queryNames(op)), value: queryValues }) },
      { weight: 2, arbitrary: headers.map((h) => ({ kind: 'header' as const, ...h })) },
      { weight: 2, arbitrary: fc.record({ kind: fc.constant('credential' as const), which: fc.constantFrom('none' as const, 'garbage' as const, 'stranger' as const, 'no-scopes' as const, 'no-api-plan' as const) }) },
      { weight: 1, arbitrary: fc.constant({ kind: 'foreign-resource' as const }) },
    );
    return mutation.map((m) => ({ operation: op.id, mutation: m }));
  });
}

// ---------------------------------------------------------------- building the request

const escapeSegment = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/** Every pointer into a JSON value (the root included), in document order. */
export function pointersOf(value: unknown, at = ''): string[] {
  const out = [at];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...pointersOf(v, `${at}/${i}`)));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...pointersOf(v, `${at}/${escapeSegment(k)}`));
  return out;
}

function parentOf(root: unknown, pointer: string): { parent: any; key: string } | undefined {
  const parts = pointer.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let node: any = root;
  for (const part of parts.slice(0, -1)) {
    if (node === null || typeof node !== 'object') return undefined;
    node = node[part];
  }
  return node !== null && typeof node === 'object' ? { parent: node, key: parts.at(-1)! } : undefined;
}

/** Marker → JSON text pieces: deep values never go through JSON.stringify (it would overflow). */
function expand(value: FuzzValue, foreignId: string, deep: Map<string, number>): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const v = value as Record<string, unknown>;
  if (typeof v.$deep === 'number') {
    const token = `__deep_${deep.size}_${randomUUID()}__`;
    deep.set(token, v.$deep);
    return token;
  }
  if (typeof v.$long === 'number') return 'x'.repeat(v.$long);
  if (typeof v.$array === 'number') return Array.from({ length: v.$array }, (_, i) => `item ${i}`);
  if (v.$foreign === true) return foreignId;
  return value;
}

function serialise(body: unknown, deep: Map<string, number>): string {
  let text = JSON.stringify(body);
  for (const [token, depth] of deep) text = text.replace(JSON.stringify(token), '['.repeat(depth) + ']'.repeat(depth));
  return text;
}

export interface BuildContext {
  example: { path: string; body?: unknown };
  op: Operation;
  key: string;
  host: string;
  /** An id of a resource of another organisation. */
  foreignId: string;
  /** Credentials for the `credential` mutation. */
  credentials: { stranger: string; noScopes: string; noApiPlan: { key: string; host: string } };
}

export function buildRequest(c: FuzzCase, ctx: BuildContext): BuiltRequest {
  const { op, example } = ctx;
  const m = c.mutation;
  const headers: Record<string, string> = { host: ctx.host, authorization: `Bearer ${ctx.key}` };
  if (op.idempotency) headers['idempotency-key'] = `fuzz-${randomUUID()}`;
  let [path, query = ''] = example.path.split('?');
  let body: unknown = op.body ? structuredClone(example.body) : undefined;
  let payload: string | undefined;
  let pointer: string | undefined;
  const deep = new Map<string, number>();

  switch (m.kind) {
    case 'set':
    case 'add':
    case 'remove': {
      if (body === undefined) body = {};
      const pointers = pointersOf(body);
      pointer = pointers[m.at % pointers.length];
      if (m.kind === 'add') {
        const target = parentOf(body, `${pointer}/x`);
        if (target && !Array.isArray(target.parent)) pointer = `${pointer}/${escapeSegment(m.name)}`;
      }
      // A webhook URL is fetched by the service: only loopback addresses, never a name to look up.
      const value = m.kind === 'remove' ? undefined : /\/url$/.test(pointer) ? 'https://127.0.0.1:1/unreachable' : expand(m.value, ctx.foreignId, deep);
      if (pointer === '') {
        if (m.kind !== 'remove') body = value;
        else body = undefined;
        break;
      }
      const target = parentOf(body, pointer)!;
      if (m.kind === 'remove') {
        if (Array.isArray(target.parent)) target.parent.splice(Number(target.key), 1);
        else delete target.parent[target.key];
      } else if (Array.isArray(target.parent) && m.kind === 'add') {
        target.parent.push(value);
      } else {
        // defineProperty, so that a key named `__proto__` is a member, not the prototype.
        Object.defineProperty(target.parent, target.key, { value, enumerable: true, writable: true, configurable: true });
      }
      break;
    }
    case 'body':
      payload = m.text;
      break;
    case 'proto': {
      const text = serialise(body ?? {}, deep);
      payload = text.startsWith('{') ? `{${JSON.stringify(m.key)}:{"polluted":true}${text === '{}' ? '' : ','}${text.slice(1)}` : text;
      break;
    }
    case 'segment': {
      const parts = path.split('/');
      parts[1 + (m.at % (parts.length - 1))] = m.value;
      path = parts.join('/');
      break;
    }
    case 'query':
      query = `${query}${query ? '&' : ''}${encodeURIComponent(m.name)}=${m.value}`;
      break;
    case 'header':
      headers[m.name] = m.value;
      break;
    case 'credential':
      if (m.which === 'none') delete headers.authorization;
      else if (m.which === 'garbage') headers.authorization = 'Bearer atr_live_thisisnotakeyofours';
      else if (m.which === 'stranger') headers.authorization = `Bearer ${ctx.credentials.stranger}`;
      else if (m.which === 'no-scopes') headers.authorization = `Bearer ${ctx.credentials.noScopes}`;
      else {
        headers.authorization = `Bearer ${ctx.credentials.noApiPlan.key}`;
        headers.host = ctx.credentials.noApiPlan.host;
      }
      break;
    case 'content-type':
    case 'none':
    case 'foreign-resource':
      break;
  }
  if (payload === undefined && body !== undefined) payload = serialise(body, deep);
  if (payload !== undefined) headers['content-type'] = 'application/json';
  if (m.kind === 'content-type') {
    if (m.value === null) delete headers['content-type'];
    else headers['content-type'] = m.value;
    payload ??= '{}';
  }
  let json: unknown;
  try {
    json = payload === undefined ? undefined : JSON.parse(payload);
  } catch {
    json = undefined;
  }
  return { method: op.method, url: `/api/v1${path}${query ? `?${query}` : ''}`, headers, payload, json, pointer };
}
