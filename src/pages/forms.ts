// Forms are checked with the same schemas and the same Ajv rules as the REST bodies (CONVENTIONS: one code
// path), and a refusal comes back as one message per form field, shown next to it.
import type { ApiError } from '../errors/api-error.ts';

/** Form field name → the message shown next to it; `_form` for what belongs to no one field. */
export type FieldErrors = Record<string, string>;

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
