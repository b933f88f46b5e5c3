// Two Ajv instances: request bodies are strict JSON (no type coercion: `visible: "yes"` is a 422, not true);
// query strings and headers arrive as text, so they are coerced to the declared types. Both refuse NUL in
// every string a schema declares (nul-characters.ts).
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsPlugin from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';
import { addNoNulKeyword, withNoNul } from './nul-characters.ts';

const addFormats = addFormatsPlugin as unknown as (ajv: Ajv) => Ajv;

function makeAjv(coerceTypes: boolean): Ajv {
  // allErrors so that a 422 names every offending field; bodies are capped by BODY_LIMIT_BYTES.
  const ajv = new Ajv({ allErrors: true, coerceTypes, useDefaults: true, removeAdditional: false, strict: false });
  addFormats(ajv);
  addNoNulKeyword(ajv);
  return ajv;
}

const strictAjv = makeAjv(false);
const coercingAjv = makeAjv(true);

/** A validator with exactly the rules request bodies get, for JSON validated outside a route (a bulk item's `data`). */
export const compileBodyValidator = (schema: object) => strictAjv.compile(withNoNul(schema));

/** An operation's own input validator: coercing for path and query text, strict for a body. */
export const compileInputValidator = (schema: object, part: 'params' | 'querystring' | 'body') =>
  (part === 'body' ? strictAjv : coercingAjv).compile(withNoNul(schema));

/**
 * Fastify asks for every route's validators at start; each is compiled when its route first validates a
 * request instead, so that a process pays for the routes it serves, not for all of them at start
 * (docs/operating.md#memory). The validator keeps Ajv's `errors` where Fastify reads them.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown) => {
    compiled ??= compileInputValidator(schema as object, httpPart === 'body' ? 'body' : 'querystring');
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate as ReturnType<FastifySchemaCompiler<unknown>>;
};
