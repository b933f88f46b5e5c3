import Type from 'typebox';
import { ExternalId, Nullable, Timestamp, Uuid, nameSchemas } from '../../operations/schemas.ts';
import { Role } from '../enrolment-methods/enrolment-methods.schemas.ts';

const EnrolmentRole = { ...Role, description: 'The person’s role in the course; left out, the enrolment method’s role.' };
export const EnrolmentStatus = Type.Union([Type.Literal('active'), Type.Literal('suspended')], {
  description: 'A suspended enrolment keeps its place but gives no access (and receives no course messages).',
});

export const Enrolment = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    course_id: Uuid(),
    user_id: Uuid({ description: 'The person enrolled.' }),
    enrolment_method_id: Uuid(),
    role: Role,
    status: EnrolmentStatus,
    starts_at: Nullable(Timestamp('null: from the start.')),
    ends_at: Nullable(Timestamp('null: open-ended.')),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A person in a course, through one of the course’s enrolment methods.' },
);

const Dates = {
  starts_at: Type.Optional(Nullable(Timestamp('RFC 3339; null: from the start.'))),
  ends_at: Type.Optional(Nullable(Timestamp('RFC 3339, not before `starts_at`; null: open-ended.'))),
};

export const CreateEnrolment = Type.Object(
  {
    course_id: Uuid(),
    user_id: Uuid(),
    enrolment_method_id: Uuid({ description: 'An enrolment method of the same course, enabled.' }),
    role: Type.Optional(EnrolmentRole),
    status: Type.Optional(EnrolmentStatus),
    ...Dates,
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateEnrolment = Type.Object(
  { role: Type.Optional(Role), status: Type.Optional(EnrolmentStatus), ...Dates },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value. Course, person and method do not change.' },
);

/** `PUT /enrolments/ext:{external_id}` and a bulk `upsert`: the external id names the enrolment. */
export const UpsertEnrolment = Type.Omit(CreateEnrolment, ['external_id'], { additionalProperties: false });

export const ListEnrolmentsFilters = {
  course_id: Type.Optional(Uuid({ description: 'Only enrolments in this course.' })),
  user_id: Type.Optional(Uuid({ description: 'Only enrolments of this person.' })),
  status: Type.Optional(EnrolmentStatus),
};

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ Enrolment, CreateEnrolment, UpdateEnrolment, UpsertEnrolment });
