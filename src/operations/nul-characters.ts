// docs/conventions.md#errors — text fields refuse the NUL character (422 at the field) on every database.
// PostgreSQL cannot store U+0000 in text at all (a 500 before this rule) and SQLite would keep it and cut
// strings short in other tools, so the rule is one schema keyword, `noNul`, added to every string a request
// schema declares (body fields at any depth, path and query parameters, bulk items' `data`). Free-form JSON
// values (a wiki page's `body`) are stored as JSON text, where NUL is escaped, so they may hold it.
import type { Ajv } from 'ajv';
import { UUID_PATTERN } from './schemas.ts';

export const NO_NUL_KEYWORD = 'noNul';

export function addNoNulKeyword(ajv: Ajv): void {
  ajv.addKeyword({
    keyword: NO_NUL_KEYWORD,
    type: 'string',
    schemaType: 'boolean',
    errors: false,
    validate: (enabled: boolean, data: string) => !enabled || !data.includes('\u0000'),
  });
}

// Keys whose values are data, not subschemas; `not` is left alone, where the keyword would mean the opposite.
const NOT_SCHEMAS = new Set(['const', 'enum', 'default', 'examples', 'example', 'not']);
// Keys whose values map names (a field may be called `default`) to subschemas.
const SCHEMA_MAPS = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas']);
const copies = new WeakMap<object, unknown>();

const declaresString = (type: unknown) => type === 'string' || (Array.isArray(type) && type.includes('string'));

/**
 * A copy of `schema` with `noNul` on every string subschema, and without the `format: 'uuid'` an id's pattern
 * already decides (see below): the copy Ajv compiles (validation.ts). Copies are remembered per original object, so a
 * subschema shared by several schemas stays one object for Ajv (its compile cache is by identity).
 */
export function withNoNul<T>(schema: T): T {
  if (schema === null || typeof schema !== 'object') return schema;
  const known = copies.get(schema);
  if (known !== undefined) return known as T;
  let copy: unknown;
  if (Array.isArray(schema)) {
    copy = schema.map(withNoNul);
  } else {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(schema)) {
      if (SCHEMA_MAPS.has(key) && value !== null && typeof value === 'object') {
        out[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, withNoNul(sub)]));
      } else {
        out[key] = NOT_SCHEMAS.has(key) ? value : withNoNul(value);
      }
    }
    if (declaresString(out.type)) out[NO_NUL_KEYWORD] = true;
    // This copy is only ever compiled by Ajv (validation.ts), so it also drops a check that can never decide
    // anything: an id (`Uuid()`) carries `format: 'uuid'` beside `pattern: UUID_PATTERN`, which only accepts
    // what the format accepts and is checked first (its error is the one reported: field-errors.ts keeps the
    // first per field). That second regular expression cost 0.3 ms of a bulk request of 500 enrolments.
    if (out.format === 'uuid' && out.pattern === UUID_PATTERN) delete out.format;
    copy = out;
  }
  copies.set(schema, copy);
  return copy as T;
}
