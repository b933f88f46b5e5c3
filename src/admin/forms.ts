// Forms are checked with the same schemas and the same Ajv rules as the REST bodies (CONVENTIONS: one code
// path), and a refusal comes back as one message per form field, shown next to it.
import type { TSchema } from 'typebox';
import { ApiError } from '../http/api-error.ts';
import { bodyFieldErrors } from '../http/problems.ts';
import { compileBodyValidator } from '../http/validation.ts';

/** Form field name → the message shown next to it; `_form` for what belongs to no one field. */
export type FieldErrors = Record<string, string>;

const validators = new WeakMap<TSchema, ReturnType<typeof compileBodyValidator>>();

/** The body's field errors keyed by the form field they point at (`/event_types/2` → `event_types`). */
export function fieldErrorsOf(err: ApiError): FieldErrors {
  const out: FieldErrors = {};
  for (const e of err.errors ?? []) {
    const field = e.path.split('/')[1] || '_form';
    out[field] ??= e.detail;
  }
  if (Object.keys(out).length === 0) out._form = err.detail;
  return out;
}

/** Validates like a request body would be; throws the same 422 ApiError the REST operation would. */
export function validateAsBody<T>(schema: TSchema, value: unknown): T {
  let validate = validators.get(schema);
  if (!validate) validators.set(schema, (validate = compileBodyValidator(schema)));
  if (!validate(value)) {
    throw new ApiError('validation.invalid_body', 'The form has errors.', { errors: bodyFieldErrors((validate.errors ?? []) as never) });
  }
  return value as T;
}

/** One value of a form field: the first when it was sent more than once, '' when absent. */
export function formString(body: unknown, name: string): string {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(v)) return String(v[0] ?? '');
  return typeof v === 'string' ? v : '';
}

/** Every value of a repeated form field (checkboxes); a single value arrives as a string. */
export function formList(body: unknown, name: string): string[] {
  const v = (body as Record<string, unknown> | undefined)?.[name];
  if (Array.isArray(v)) return v.map(String);
  return typeof v === 'string' ? [v] : [];
}

/** A textarea of one entry per line: trimmed, blank lines dropped. */
export function formLines(body: unknown, name: string): string[] {
  return formString(body, name)
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
