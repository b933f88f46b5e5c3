import Type from 'typebox';
import { ExternalId, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';
import { namesOfKind } from '../extensions/extensions.catalog.ts';

// The spec does not show the record's fields; these are what an integrator configuring enrolment needs.
const MethodType = Type.Unsafe<string>({ type: 'string', enum: namesOfKind('enrolment_method'), examples: ['self'], description: 'The enrolment-method extension: manual, self, guest or cohort.' });
const Status = Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], { description: 'A disabled method admits no one new; existing enrolments stay.' });
export const Role = Type.Union([Type.Literal('student'), Type.Literal('non_editing_teacher'), Type.Literal('teacher')], { description: 'Role given to people enrolled through the method.' });

/** Settings by type: `self` takes enrolment_key and max_enrolments, `guest` a password, `cohort` its cohort_id. */
export const MethodSettings = Type.Object(
  {
    enrolment_key: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
    max_enrolments: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 1_000_000 }))),
    password: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 100 }))),
    cohort_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  },
  {
    additionalProperties: false,
    description: 'Keys allowed depend on `type`: self → enrolment_key, max_enrolments; guest → password; cohort → cohort_id (required).',
    examples: [{ enrolment_key: 'stats-2026', max_enrolments: 200 }],
  },
);

export const EnrolmentMethod = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    course_id: Uuid(),
    type: Type.String({ examples: ['self'] }),
    name: Nullable(Type.String({ examples: ['Self enrolment with key'] })),
    status: Status,
    role: Role,
    settings: MethodSettings,
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A way into a course (manual, self, guest, cohort).' },
);

export const CreateEnrolmentMethod = Type.Object(
  {
    course_id: Uuid(),
    type: MethodType,
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    status: Type.Optional(Status),
    role: Type.Optional(Role),
    settings: Type.Optional(MethodSettings),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateEnrolmentMethod = Type.Object(
  {
    name: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 255 }))),
    status: Type.Optional(Status),
    role: Type.Optional(Role),
    settings: Type.Optional(MethodSettings),
  },
  { additionalProperties: false, description: 'Partial update; `settings` replaces the settings as a whole.' },
);

export const UpsertEnrolmentMethod = Type.Omit(CreateEnrolmentMethod, ['external_id'], { additionalProperties: false });

export const DeleteEnrolmentMethodQuery = Type.Object(
  {
    unenrol: Type.Optional(
      Type.Boolean({ default: false, description: 'Also end the active enrolments made through this method. Without it, a method that still has any is not deleted (409).' }),
    ),
  },
  { additionalProperties: false },
);

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ EnrolmentMethod, CreateEnrolmentMethod, UpdateEnrolmentMethod, UpsertEnrolmentMethod });
