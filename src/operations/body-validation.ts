// Validating a value exactly as a request body would be, outside a route: a form of the admin pages, the input
// of a CLI command. A refusal is the same 422 ApiError, with the same `errors` pointers and wording.
import type { TSchema } from 'typebox';
import { ApiError } from '../errors/api-error.ts';
import { bodyFieldErrors } from './field-errors.ts';
import { compileBodyValidator } from './validation.ts';

const validators = new WeakMap<TSchema, ReturnType<typeof compileBodyValidator>>();

export function validateAsBody<T>(schema: TSchema, value: unknown): T {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = compileBodyValidator(schema)));
  if (!validate(value)) {
    const errors = bodyFieldErrors((validate.errors ?? []) as never);
    throw new ApiError('validation.invalid_body', errors.map((e) => `${e.path.slice(1) || 'the input'}: ${e.detail}`).join(' '), { errors });
  }
  return value as T;
}
