// What a draft may contain beyond its schema, at both levels: variables the message offers, and a body that
// is JSON text (spec: Resources — "block document or MJML source as JSON text"). Every offending field is
// named in one 422, as for schema errors.
import { ApiError, type FieldError } from '../../errors/api-error.ts';
import type { MessageDefinition } from './message-catalog.ts';

export interface DraftInput {
  variable_refs?: string[];
  body?: string | null;
}

export function checkDraftContent(message: MessageDefinition, input: DraftInput): void {
  const errors: FieldError[] = [];
  const offered = new Set(message.variables.map((v) => v.name));
  (input.variable_refs ?? []).forEach((name, i) => {
    if (!offered.has(name)) {
      errors.push({ path: `/variable_refs/${i}`, code: 'unknown_variable', detail: `The message ${message.message_key} offers no variable ${JSON.stringify(name)}; see its \`variables\` in the catalog.` });
    }
  });
  if (typeof input.body === 'string') {
    try {
      JSON.parse(input.body);
    } catch {
      errors.push({ path: '/body', code: 'invalid_json', detail: '`body` must be JSON text: a block document, or the MJML source as a JSON string.' });
    }
  }
  if (errors.length > 0) throw new ApiError('validation.invalid_body', 'The request body is invalid; see `errors`.', { errors });
}

/** The stored form of a draft: every content field present, a field left out being null (inherit). */
export function draftColumns<K extends string>(input: Partial<Record<K, string | null>> & { variable_refs?: string[] }, fields: readonly K[]) {
  const columns = Object.fromEntries(fields.map((f) => [f, input[f] ?? null])) as Record<K, string | null>;
  return { ...columns, variable_refs: JSON.stringify(input.variable_refs ?? []) };
}
