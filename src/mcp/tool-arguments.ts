// A tool call's arguments as the REST request of its operation: each argument goes where its operation declared
// the field (path, query or body), `idempotency_key` becomes the Idempotency-Key header. The REST pipeline then
// validates everything as it validates any request (a body field's 422 names it by its JSON Pointer, which is
// also its pointer in the arguments). Only what cannot reach the REST request at all is refused here, with
// `mcp.invalid_arguments` and pointers into the arguments: a missing or non-scalar path value, a query value
// that is not a scalar, an argument the operation has no place for.
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { API_PREFIX } from '../http/registry.ts';
import { IDEMPOTENCY_ARGUMENT, type Tool } from './tools.ts';

export interface RestRequest {
  method: Tool['op']['method'];
  /** Path and query, under /api/v1. */
  url: string;
  /** JSON text, for operations that take a body. */
  body?: string;
  idempotencyKey?: string;
}

type Scalar = string | number | boolean;
const isScalar = (v: unknown): v is Scalar => typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'boolean';
const pointer = (name: string) => `/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`;

export function restRequestFor(tool: Tool, args: Record<string, unknown>): RestRequest {
  const errors: FieldError[] = [];
  const fail = (name: string, code: string, detail: string) => errors.push({ path: pointer(name), code, detail });
  const query = new URLSearchParams();
  const body: Record<string, unknown> = {};
  let idempotencyKey: string | undefined;

  for (const [name, value] of Object.entries(args)) {
    if (tool.pathFields.has(name)) continue;
    if (name === IDEMPOTENCY_ARGUMENT && tool.op.idempotency) {
      if (typeof value === 'string') idempotencyKey = value;
      else fail(name, 'invalid_type', `\`${name}\` must be a string.`);
    } else if (tool.queryFields.has(name)) {
      const values = Array.isArray(value) ? value : [value];
      if (values.every(isScalar)) for (const v of values) query.append(name, String(v));
      else fail(name, 'invalid_type', `\`${name}\` must be a string, a number or a boolean.`);
    } else if (tool.bodyFields.has(name) || tool.op.body) {
      // An argument the body does not know goes there too: the body's schema refuses it by its pointer.
      body[name] = value;
    } else {
      fail(name, 'unknown_field', `\`${name}\` is not a known argument of ${tool.name}.`);
    }
  }

  const path = tool.op.path.replace(/\{(\w+)\}/g, (_placeholder, name: string) => {
    const value = args[name];
    if (value === undefined) fail(name, 'required', `\`${name}\` is required.`);
    else if (!isScalar(value)) fail(name, 'invalid_type', `\`${name}\` must be a string.`);
    else return encodeURIComponent(String(value));
    return '_';
  });

  if (errors.length > 0) throw new ApiError('mcp.invalid_arguments', `The arguments of ${tool.name} are invalid; see \`errors\`.`, { errors });
  const search = query.toString();
  return {
    method: tool.op.method,
    url: `${API_PREFIX}${path}${search ? `?${search}` : ''}`,
    ...(tool.op.body ? { body: JSON.stringify(body) } : {}),
    ...(idempotencyKey !== undefined ? { idempotencyKey } : {}),
  };
}
