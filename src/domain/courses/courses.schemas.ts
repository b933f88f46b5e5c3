import Type from 'typebox';
import { ExternalId, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';

export const Course = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    category_id: Nullable(Uuid()),
    fullname: Type.String(),
    shortname: Type.String(),
    visible: Type.Boolean(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A course: the container of sections and activities.' },
);

const Name = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '\\S' });

export const CreateCourse = Type.Object(
  {
    fullname: Name(255),
    shortname: Name(100),
    category_id: Type.Optional(Nullable(Uuid())),
    visible: Type.Optional(Type.Boolean({ default: true })),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateCourse = Type.Object(
  {
    fullname: Type.Optional(Name(255)),
    shortname: Type.Optional(Name(100)),
    category_id: Type.Optional(Nullable(Uuid())),
    visible: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const Category = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    parent_id: Nullable(Uuid()),
    name: Type.String(),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A course category; categories nest.' },
);

export const CreateCategory = Type.Object(
  {
    name: Name(255),
    parent_id: Type.Optional(Nullable(Uuid())),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateCategory = Type.Object(
  {
    name: Type.Optional(Name(255)),
    parent_id: Type.Optional(Nullable(Uuid())),
  },
  { additionalProperties: false },
);

/** `PUT /courses/ext:{external_id}` and `/categories/ext:{external_id}`: the external id is in the path. */
export const UpsertCourse = Type.Omit(CreateCourse, ['external_id'], { additionalProperties: false });
export const UpsertCategory = Type.Omit(CreateCategory, ['external_id'], { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ Course, CreateCourse, UpdateCourse, UpsertCourse, Category, CreateCategory, UpdateCategory, UpsertCategory });
