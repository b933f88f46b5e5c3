// Example values for the OpenAPI document, made from the schemas themselves so that every operation shows a
// request and a response without anyone writing them by hand (and none can drift from its schema: a test
// validates each one). A field's own `examples` win; otherwise its format, then its name, say what a
// realistic value looks like. Ids are derived from the field's name, so `course_id` is the same course in
// every example of the document.
import { createHash } from 'node:crypto';

type Schema = Record<string, any>;

/** A UUID (version 7 layout) that is always the same for the same name. */
export function exampleUuid(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `0193a5b2-${h.slice(0, 4)}-7${h.slice(4, 7)}-8${h.slice(7, 10)}-${h.slice(10, 22)}`;
}

// Fields a live resource usually has empty: their example is null where the schema allows it.
const usuallyNull = new Set(['last_error', 'deleted_at', 'disabled_reason', 'parent_section_id', 'parent_id', 'restored_from', 'error', 'subwiki_user_id', 'subwiki_group_id']);

// Realistic values by field name, for strings without a format or examples of their own.
const byName: Record<string, unknown> = {
  title: 'Week 1: Foundations',
  name: 'Introduction to Statistics',
  fullname: 'Introduction to Statistics',
  shortname: 'STAT101',
  description: 'Course structure sync for the student information system.',
  subject: 'Welcome to {{course.fullname}}',
  preheader: 'Everything you need for your first week',
  from_name: 'Registry Office',
  reply_to: 'registry@school.example',
  text_part: 'Hello {{user.firstname}}, welcome to the course.',
  content: 'Read chapter 1 before the first lecture.',
  external_id: 'sis-4711',
  sort_key: 'a0',
  message_key: 'enrolment_welcome',
  language: 'en',
  category: 'enrolment',
  url: 'https://hooks.example.com/atrium',
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  filename: 'syllabus.pdf',
  content_type: 'application/pdf',
  content_base64: 'JVBERi0xLjcK',
  disabled_reason: 'consecutive failures',
  detail: 'The request body is invalid; see `errors`.',
  request_id: 'req_3f6c2a9d8b7e4c1a9f0e2d4b6a8c0e1f',
  next_cursor: 'eyJsIjoic2VjdGlvbnMifQ.c2lnbmF0dXJl',
  cursor: 'eyJsIjoic2VjdGlvbnMifQ.c2lnbmF0dXJl',
  ref: 'week-1',
  code: 'too_short',
  enrolment_key: 'stats-2026',
  password: 'open-day',
  directory: 'archive/2026',
  sha256: '9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  response_body: 'ok',
  plan: 'standard',
  pinned_revision: '2026-11-01',
  scope: 'courses:read',
  capability: 'course/view',
  notification_email: 'it-ops@school.example',
  variable_ref: 'user.firstname',
  page_type: 'content',
  jump_to: 'next_page',
  response: 'Correct: plants give off oxygen.',
  text: 'True',
  error: '550 5.1.1 No such user',
  address: 'school.example',
  email: 'ada@school.example',
  response_excerpt: 'ok',
  event_type: 'section.updated',
  area: 'section',
  summary: 'Section “Week 1: Foundations” renamed.',
  'Idempotency-Key': '5f2b8c1e-3d4a-4b6c-9e7f-0a1b2c3d4e5f',
  body: '{"blocks":[{"type":"text","text":"Hello {{user.firstname}}"}]}',
};

const byFormat: Record<string, string> = {
  'date-time': '2026-11-02T09:30:00.000Z',
  date: '2026-11-01',
  email: 'ada@school.example',
  uri: 'https://hooks.example.com/atrium',
};

const MAX_DEPTH = 12;

/** An example value for `schema`; `name` is the property it sits under (or the operation's, at the top). */
export function exampleOf(schema: Schema | undefined, name = '', depth = 0): unknown {
  if (!schema || depth > MAX_DEPTH) return null;
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return structuredClone(schema.examples[0]);
  if (schema.example !== undefined) return structuredClone(schema.example);
  if (schema.const !== undefined) return schema.const;
  if (usuallyNull.has(name) && allowsNull(schema)) return null;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const branches = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(branches)) {
    // A value rather than null; the first branch the schema lists otherwise.
    const chosen = branches.find((b: Schema) => b.type !== 'null') ?? branches[0];
    return exampleOf(chosen, name, depth + 1);
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((s: Schema) => exampleOf(s, name, depth + 1)));
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== 'null') ?? 'null') : schema.type;
  switch (type) {
    case 'object':
      return objectExample(schema, depth);
    case 'array': {
      const count = Math.max(1, schema.minItems ?? 1);
      const singular = name.endsWith('ies') ? `${name.slice(0, -3)}y` : name.replace(/s$/, '');
      return Array.from({ length: count }, (_, i) => exampleOf(schema.items, count > 1 ? `${singular}${i}` : singular, depth + 1));
    }
    case 'string':
      return stringExample(schema, name);
    case 'integer':
    case 'number':
      return numberExample(schema, name);
    case 'boolean':
      return schema.default ?? true;
    case 'null':
      return null;
    default:
      // `{}`: any JSON value.
      return schema.default ?? {};
  }
}

function allowsNull(schema: Schema): boolean {
  if (Array.isArray(schema.type)) return schema.type.includes('null');
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? [])].some((b: Schema) => b.type === 'null');
}

function objectExample(schema: Schema, depth: number): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, prop] of Object.entries((schema.properties ?? {}) as Record<string, Schema>)) out[key] = exampleOf(prop, key, depth + 1);
  // A map (`Type.Record`): one entry, its key made to the key schema's rules where it has an example.
  const patterns = Object.entries((schema.patternProperties ?? {}) as Record<string, Schema>);
  if (Object.keys(out).length === 0 && patterns.length > 0) {
    const [, valueSchema] = patterns[0];
    const key = schema.propertyNames?.examples?.[0] ?? 'course_id';
    out[key] = exampleOf(valueSchema, key, depth + 1);
  }
  return out;
}

function stringExample(schema: Schema, name: string): string {
  const named = typeof byName[name] === 'string' ? (byName[name] as string) : undefined;
  if (schema.format === 'uuid' || (named === undefined && (name === 'id' || name.endsWith('_id')))) return exampleUuid(name || 'id');
  const formatted = byFormat[schema.format as string];
  let value = formatted ?? (typeof schema.default === 'string' ? schema.default : undefined) ?? named;
  value ??= name ? name.replace(/_/g, ' ') : 'text';
  if (typeof schema.maxLength === 'number' && value.length > schema.maxLength) value = value.slice(0, schema.maxLength);
  if (typeof schema.minLength === 'number' && value.length < schema.minLength) value = value.padEnd(schema.minLength, 'x');
  return value;
}

function numberExample(schema: Schema, name: string): number {
  if (typeof schema.default === 'number') return schema.default;
  const min = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
  const fallback = /failures|failed/.test(name) ? 0 : /count|total|succeeded|sent/.test(name) ? 3 : /status/.test(name) ? 200 : /limit/.test(name) ? 50 : 1;
  let value = Math.max(min ?? fallback, fallback);
  if (typeof schema.maximum === 'number') value = Math.min(value, schema.maximum);
  return value;
}
