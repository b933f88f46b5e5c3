import Type from 'typebox';
import { ExternalId, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';

// The spec leaves the summary's shape open; we store formatted text, as course pages render it.
export const SectionSummary = Type.Object(
  {
    format: Type.Union([Type.Literal('html'), Type.Literal('markdown'), Type.Literal('plain')]),
    content: Type.String({ maxLength: 65535 }),
  },
  { additionalProperties: false, description: 'Formatted text shown at the top of the section.' },
);

export const Section = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    course_id: Uuid(),
    parent_section_id: Nullable(Uuid()),
    sort_key: Type.String({ description: 'Orders sections within their course (lexicographic).' }),
    title: Nullable(Type.String()),
    summary: Nullable(SectionSummary),
    visible: Type.Boolean(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A section of a course.' },
);

// spec: operation 10 — title 1 to 255 characters. A title of only spaces is refused as empty.
const Title = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1 to 255 characters.' });

export const CreateSection = Type.Object(
  {
    course_id: Uuid(),
    title: Type.Optional(Nullable(Title)),
    summary: Type.Optional(Nullable(SectionSummary)),
    visible: Type.Optional(Type.Boolean({ default: true })),
    parent_section_id: Type.Optional(Nullable(Uuid())),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateSection = Type.Object(
  {
    title: Type.Optional(Title),
    visible: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value.' },
);

/** `PUT /sections/ext:{external_id}`: the external id is in the path. */
export const UpsertSection = Type.Omit(CreateSection, ['external_id'], { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ Section, CreateSection, UpdateSection, UpsertSection });
