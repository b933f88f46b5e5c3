import Type from 'typebox';
import { ExternalId, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';
import { namesOfKind } from '../extensions/extensions.catalog.ts';

// The spec names wiki pages and lesson pages but not the activities they belong to; these are the fields an
// integrator needs to place one in a course. Each type is a compiled-in extension (spec: What the service does 7).
const ActivityTypeName = Type.Unsafe<string>({ type: 'string', enum: namesOfKind('activity_type'), description: 'The activity-type extension: wiki or lesson.' });

export const WikiMode = Type.Union([Type.Literal('collaborative'), Type.Literal('individual'), Type.Literal('group')], {
  description: 'collaborative: one wiki everybody edits; individual: one subwiki per person; group: one subwiki per group.',
});

/** Settings by type. A type adds its keys here and lists them in its `ActivityType.settingKeys`. */
export const ActivitySettings = Type.Object(
  {
    mode: Type.Optional(WikiMode),
  },
  {
    additionalProperties: false,
    description: 'Keys depend on `type`: wiki → `mode` (default `collaborative`); lesson → none. Fixed once the activity exists.',
  },
);

const Name = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1 to 255 characters.' });

export const Activity = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    course_id: Uuid(),
    section_id: Nullable(Uuid()),
    type: Type.String({ examples: ['wiki'] }),
    name: Type.String(),
    settings: ActivitySettings,
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'An activity of a course (a wiki, a lesson); its pages hang from it.' },
);

export const CreateActivity = Type.Object(
  {
    course_id: Uuid(),
    type: ActivityTypeName,
    name: Name,
    section_id: Type.Optional(Nullable(Uuid({ description: 'A live section of the same course; null for none.' }))),
    settings: Type.Optional(ActivitySettings),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateActivity = Type.Object(
  {
    name: Type.Optional(Name),
    section_id: Type.Optional(Nullable(Uuid())),
  },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value. Course, type and settings are fixed.' },
);

/** `PUT /activities/ext:{external_id}`: the external id is in the path. */
export const UpsertActivity = Type.Omit(CreateActivity, ['external_id'], { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ Activity, CreateActivity, UpdateActivity, UpsertActivity });
