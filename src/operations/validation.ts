// Two Ajv instances: request bodies are strict JSON (no type coercion: `visible: "yes"` is a 422, not true);
// query strings and headers arrive as text, so they are coerced to the declared types. Both refuse NUL in
// every string a schema declares (nul-characters.ts).
import { Ajv } from 'ajv';
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
 * The same rules for any route that declares a schema to Fastify. No route does today (an operation's input is
 * checked by the pipeline, input-validation.ts, and compiled with its first call); set so that one added later
 * gets these rules, not Fastify's defaults.
 */
export const validatorCompiler: FastifySchemaCompiler<unknown> = ({ schema, httpPart }) =>
  compileInputValidator(schema as object, httpPart === 'body' ? 'body' : 'querystring') as ReturnType<FastifySchemaCompiler<unknown>>;
