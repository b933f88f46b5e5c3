// A tool call's arguments as the input of its operation, shaped as its REST request would bring it: each argument
// goes where its operation declared the field (path and query values as the text a URL carries, body fields as
// the JSON object a body parses to), `idempotency_key` becomes the Idempotency-Key header, and the REST URL the
// request would have is kept for the idempotency fingerprint (so a REST retry with the same key replays a tool
// call's answer). The pipeline then validates everything as it validates any request (a body field's 422 names
// it by its JSON Pointer, which is also its pointer in the arguments). Only what cannot reach the operation at all is refused here, with
// `mcp.invalid_arguments` and pointers into the arguments: a missing or non-scalar path value, a query value
// that is not a scalar, an argument the operation has no place for.
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { API_PREFIX } from '../http/registry.ts';
import { IDEMPOTENCY_ARGUMENT, type Tool } from './tools.ts';

export interface RestRequest {
  method: Tool['op']['method'];
  /** Path and query, under /api/v1: the URL the REST request would have. */
  url: string;
  /** Path values as the router decodes them from the URL. */
  params: Record<string, string>;
  /** Query values as a query string parses: text, a list of texts for a field given several. */
  query: Record<string, string | string[]>;
  /** The body's JSON object, for operations that take a body; not checked yet (the body parser's check comes after admission). */
  body?: unknown;
  idempotencyKey?: string;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
const pointer = (name: string) => `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/**
 * The operation's path as its literal parts and, between them, the names of its values: `/sections/{id}` →
 * `['/sections/', 'id', '']`. Made once per tool, so that a call places its values without a regular expression.
 */
const templates = new WeakMap<Tool, string[]>();
function templateOf(tool: Tool): string[] {
  let parts = templates.get(tool);
  if (parts === undefined) templates.set(tool, (parts = tool.op.path.split(/\{(\w+)\}/)));
  return parts;
}

export function restRequestFor(tool: Tool, args: Record<string, unknown>): RestRequest {
  const errors: FieldError[] = [];
  const fail = (name: string, code: string, detail: string) => errors.push({ path: pointer(name), code, detail });
  let query: URLSearchParams | undefined;
  const queryValues: Record<string, string | string[]> = {};
  const params: Record<string, string> = {};
  const body: Array<[string, unknown]> = [];
  let idempotencyKey: string | undefined;

  for (const name of Object.keys(args)) {
    if (tool.pathFields.has(name)) continue;
    const value = args[name];
    if (name === IDEMPOTENCY_ARGUMENT && tool.op.idempotency) {
      if (typeof value === 'string') idempotencyKey = value;
      else fail(name, 'invalid_type', `\`${name}\` must be a string.`);
    } else if (tool.queryFields.has(name)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.every(isScalar)) {
        const texts = values.map(String);
        query ??= new URLSearchParams();
        for (const v of texts) query.append(name, v);
        if (texts.length > 0) queryValues[name] = texts.length === 1 ? texts[0] : texts;
      } else fail(name, 'invalid_type', `\`${name}\` must be a string, a number or a boolean.`);
    } else if (tool.bodyFields.has(name) || tool.op.body) {
      // An argument the body does not know goes there too: the body's schema refuses it by its pointer.
      body.push([name, value]);
    } else {
      fail(name, 'unknown_field', `\`${name}\` is not a known argument of ${tool.name}.`);
    }
  }

  const parts = templateOf(tool);
  let path = parts[0];
  for (let i = 1; i < parts.length; i += 2) {
    const name = parts[i];
    const value = args[name];
    if (value === undefined) {
      fail(name, 'required', `\`${name}\` is required.`);
      path += '_';
    } else if (!isScalar(value)) {
      fail(name, 'invalid_type', `\`${name}\` must be a string.`);
      path += '_';
    } else path += encodeURIComponent((params[name] = String(value)));
    path += parts[i + 1];
  }

  if (errors.length > 0) throw new ApiError('mcp.invalid_arguments', `The arguments of ${tool.name} are invalid; see \`errors\`.`, { errors });
  const search = query?.toString();
  return {
    method: tool.op.method,
    url: `${API_PREFIX}${path}${search ? `?${search}` : ''}`,
    params,
    query: queryValues,
    // Own properties whatever their names: the body parser's check refuses a `__proto__` argument, as in a body.
    ...(tool.op.body ? { body: Object.fromEntries(body) } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  };
}
