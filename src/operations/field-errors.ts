// Ajv's refusals in the API's words: a body's offending fields as `errors[]` entries (a JSON pointer, a code,
// a sentence), and a path, query or header parameter as one 422. Request validation, the bulk engine and
// validateAsBody all describe a refusal through here, so the wording is the same wherever a value is checked.
import { ApiError, type FieldError } from '../errors/api-error.ts';
import { NO_NUL_KEYWORD } from './nul-characters.ts';

export interface AjvError {
  instancePath: string;
  keyword: string;
  params: Record<string, unknown>;
  message?: string;
}

const fieldCode: Record<string, string> = {
  required: 'required',
  additionalProperties: 'unknown_field',
  type: 'invalid_type',
  minLength: 'too_short',
  maxLength: 'too_long',
  minimum: 'out_of_range',
  maximum: 'out_of_range',
  exclusiveMinimum: 'out_of_range',
  exclusiveMaximum: 'out_of_range',
  minItems: 'too_few_items',
  maxItems: 'too_many_items',
  uniqueItems: 'duplicate_items',
  format: 'invalid_format',
  pattern: 'invalid_format',
  enum: 'invalid_value',
  const: 'invalid_value',
  minProperties: 'too_few_properties',
  maxProperties: 'too_many_properties',
  [NO_NUL_KEYWORD]: 'invalid_character',
};

const typeArticle: Record<string, string> = {
  object: 'an object',
  array: 'an array',
  string: 'a string',
  boolean: 'a boolean (true or false)',
  integer: 'an integer',
  number: 'a number',
  null: 'null',
};

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

function describe(e: AjvError, name: string): string {
  const p = e.params;
  switch (e.keyword) {
    case 'required':
      return `${name} is required.`;
    case 'additionalProperties':
      return `${name} is not a known field.`;
    case 'type':
      return `${name} must be ${String(p.type).split(',').map((t) => typeArticle[t] ?? t).join(' or ')}.`;
    case 'minLength':
      return p.limit === 1 ? `${name} must not be empty.` : `${name} must be at least ${p.limit} characters long.`;
    case 'maxLength':
      return `${name} must be at most ${p.limit} characters long.`;
    case 'minimum':
      return `${name} must be at least ${p.limit}.`;
    case 'maximum':
      return `${name} must be at most ${p.limit}.`;
    case 'enum':
      return `${name} must be one of: ${(p.allowedValues as unknown[]).join(', ')}.`;
    case 'const':
      return `${name} must be ${JSON.stringify(p.allowedValue)}.`;
    case NO_NUL_KEYWORD:
      return `${name} must not contain the NUL character (U+0000).`;
    default:
      return `${name} ${e.message ?? 'is invalid'}.`;
  }
}

/** Ajv errors → `errors[]` with one entry per offending field (first error wins), pointers into the body. */
export function bodyFieldErrors(errors: AjvError[]): FieldError[] {
  const byPath = new Map<string, FieldError>();
  for (const e of errors) {
    if (e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'if') continue;
    let path = e.instancePath;
    if (e.keyword === 'required') path += '/' + escapePointer(String(e.params.missingProperty));
    if (e.keyword === 'additionalProperties') path += '/' + escapePointer(String(e.params.additionalProperty));
    if (byPath.has(path)) continue;
    const name = path === '' ? 'The body' : `\`${path.slice(1).split('/').at(-1)}\``;
    byPath.set(path, { path, code: fieldCode[e.keyword] ?? 'invalid', detail: describe(e, name) });
  }
  if (byPath.size === 0 && errors.length > 0) byPath.set(errors[0].instancePath, { path: errors[0].instancePath, code: 'invalid', detail: 'This value is invalid.' });
  return [...byPath.values()];
}

export function queryProblem(errors: AjvError[], context: string): ApiError {
  const e = errors.find((x) => x.keyword !== 'anyOf') ?? errors[0];
  let name = e.instancePath.slice(1).split('/')[0];
  if (e.keyword === 'required') name = String(e.params.missingProperty);
  if (e.keyword === 'additionalProperties') name = String(e.params.additionalProperty);
  const where = context === 'headers' ? 'Header' : context === 'params' ? 'Path parameter' : 'Query parameter';
  const what = e.keyword === 'additionalProperties' ? `${where} \`${name}\` is not known here.` : describe(e, `${where} \`${name}\``);
  return new ApiError('validation.invalid_parameter', what);
}

