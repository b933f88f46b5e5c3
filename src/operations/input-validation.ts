// An operation's input checked against its declared schemas, once for every door it is called through (a REST
// route, an MCP tool call): path parameters, then the body, then the query, as Fastify would order them, each
// refusal worded by field-errors.ts. Path and query values arrive as text and are coerced to their declared
// types in place; a body is strict JSON, with the schema's defaults filled in (validation.ts).
import type { ValidateFunction } from 'ajv';
import { ApiError } from '../errors/api-error.ts';
import { bodyFieldErrors, queryProblem, type AjvError } from './field-errors.ts';
import { NO_NUL_KEYWORD } from './nul-characters.ts';
import type { Operation } from './operation.ts';
import { compileInputValidator } from './validation.ts';

export interface OperationInputParts {
  params: unknown;
  query: unknown;
  body: unknown;
}

type Part = 'params' | 'body' | 'query';

function refusal(op: Operation, part: Part, errors: AjvError[], body: unknown): ApiError {
  if (part === 'params') {
    // A NUL is refused at the field wherever it is (docs/conventions.md#errors). An upsert creates what its path names, so a
    // path value that could never be valid is a 422 there; everywhere else it simply names nothing that
    // exists (docs/conventions.md#addresses-and-requests: a path id that is not a UUID is a 404).
    const nul = errors.filter((e) => e.keyword === NO_NUL_KEYWORD);
    if (nul.length > 0) return queryProblem(nul, 'params');
    if (op.method === 'PUT') return queryProblem(errors, 'params');
    return new ApiError(op.notFoundCode ?? 'request.route_not_found');
  }
  if (part === 'body') {
    if (body === undefined || body === null) return new ApiError('request.body_required', 'This operation needs a JSON object as its body.');
    return new ApiError('validation.invalid_body', 'The request body is invalid; see `errors`.', { errors: bodyFieldErrors(errors) });
  }
  return queryProblem(errors, 'querystring');
}

/** The operation's input check: throws the 422 (or, for a path value that names nothing, the 404) it fails with. */
export function createInputCheck(op: Operation): (input: OperationInputParts) => void {
  // Compiled when the operation is first called, not at start: a process pays for the operations it serves
  // (docs/operating.md#memory).
  let checks: Array<[Part, ValidateFunction]> | undefined;
  const compile = () => {
    const compiled: Array<[Part, ValidateFunction]> = [];
    if (op.params) compiled.push(['params', compileInputValidator(op.params, 'params')]);
    if (op.body) compiled.push(['body', compileInputValidator(op.body, 'body')]);
    if (op.query) compiled.push(['query', compileInputValidator(op.query, 'querystring')]);
    return compiled;
  };
  return (input) => {
    for (const [part, check] of (checks ??= compile())) {
      const value = input[part] === undefined ? null : input[part];
      // With its parent given, Ajv may replace a root value it coerced.
      if (!check(value, { instancePath: '', parentData: input as never, parentDataProperty: part, rootData: value as never, dynamicAnchors: {} })) {
        throw refusal(op, part, check.errors as AjvError[], input.body);
      }
    }
  };
}
