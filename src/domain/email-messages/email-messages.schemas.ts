// Email messages: campaign mail an organisation sends to people, now or at a time. The spec names the
// resource (operation 8) but not its fields; these are what an integrator scheduling a campaign needs.
import Type from 'typebox';
import { PageQuery, ListQuery } from '../../operations/pagination.ts';
import { ExternalId, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';
import { Role } from '../enrolment-methods/enrolment-methods.schemas.ts';

export const MAX_PERSON_IDS = 1000;

export const MessageBody = Type.Object(
  {
    format: Type.Union([Type.Literal('html'), Type.Literal('markdown'), Type.Literal('plain')], {
      description: '`html` is sent as an HTML mail; `markdown` and `plain` as plain text (Markdown reads well as it is).',
    }),
    content: Type.String({ minLength: 1, maxLength: 100_000, pattern: '\\S', description: '1 to 100000 characters, not only white space.' }),
  },
  { additionalProperties: false, description: 'The text of the mail.' },
);

export const Audience = Type.Object(
  {
    type: Type.Union([Type.Literal('people'), Type.Literal('course')], { description: '`people`: the people listed. `course`: the participants of a course.' }),
    person_ids: Type.Optional(
      Type.Array(Uuid(), { minItems: 1, maxItems: MAX_PERSON_IDS, uniqueItems: true, description: `With \`people\` (required): 1 to ${MAX_PERSON_IDS} people of this organisation.` }),
    ),
    course_id: Type.Optional(Uuid({ description: 'With `course` (required): the course whose participants receive it.' })),
    roles: Type.Optional(
      Type.Array(Role, {
        minItems: 1,
        uniqueItems: true,
        description: 'With `course`: only participants enrolled with one of these roles. Left out: every participant.',
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      "Who receives the message, resolved when sending starts. A course's participants are the people with an active enrolment in it (through a method that is not deleted).",
  },
);

export const MessageStatus = Type.Union(
  [Type.Literal('draft'), Type.Literal('scheduled'), Type.Literal('sending'), Type.Literal('sent'), Type.Literal('cancelled')],
  {
    description:
      '`draft` → `scheduled` (needs `send_at`) → `sending` → `sent`. `scheduled` → `draft` or `cancelled`; `draft` → `cancelled`. ' +
      '`sending` is set by the service when `send_at` comes; `sent` and `cancelled` are final.',
  },
);

/** The statuses a caller may set; `sending` and `sent` are the service's to set. */
const WritableStatus = Type.Union([Type.Literal('draft'), Type.Literal('scheduled'), Type.Literal('cancelled')], {
  description: '`scheduled` needs `send_at` (not in the past); `cancelled` is final. A new message is `draft` (the default) or `scheduled`.',
});

const Subject = Type.String({ minLength: 1, maxLength: 255, pattern: '\\S', description: '1 to 255 characters, not only white space.' });
const SendAt = Nullable(Timestamp('When to send it (RFC 3339; stored in UTC). Required to schedule; null: not planned.'));

export const RecipientCounts = Type.Object(
  {
    total: Type.Integer({ description: 'Recipients the audience resolved to when sending started.' }),
    sent: Type.Integer(),
    failed: Type.Integer(),
  },
  { additionalProperties: false, description: 'Null until sending starts; `total - sent - failed` are still pending.' },
);

export const EmailMessage = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    subject: Type.String(),
    body: MessageBody,
    audience: Audience,
    send_at: Nullable(Timestamp()),
    status: MessageStatus,
    sent_at: Nullable(Timestamp('When sending finished.')),
    recipient_counts: Nullable(RecipientCounts),
    created_by: Uuid({ description: 'The person who created it.' }),
    created_at: Timestamp(),
    updated_at: Timestamp(),
    deleted_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'A campaign email message.' },
);

export const CreateEmailMessage = Type.Object(
  {
    subject: Subject,
    body: MessageBody,
    audience: Audience,
    send_at: Type.Optional(SendAt),
    status: Type.Optional(WritableStatus),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateEmailMessage = Type.Object(
  {
    subject: Type.Optional(Subject),
    body: Type.Optional(MessageBody),
    audience: Type.Optional(Audience),
    send_at: Type.Optional(SendAt),
    status: Type.Optional(WritableStatus),
  },
  { additionalProperties: false, description: 'Partial update: fields left out keep their value. Only a `draft` or `scheduled` message changes.' },
);

/** `PUT /email_messages/ext:{external_id}` (and bulk `upsert`): the external id is named outside the data. */
export const UpsertEmailMessage = Type.Omit(CreateEmailMessage, ['external_id'], { additionalProperties: false });

export const ListEmailMessagesQuery = Type.Object(
  { ...ListQuery, status: Type.Optional(MessageStatus) },
  { additionalProperties: false },
);

export const RecipientOutcome = Type.Union([Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')]);

export const Recipient = Type.Object(
  {
    id: Uuid({ description: 'Derived from the message and the person: the same before and after sending starts.' }),
    person_id: Uuid(),
    address: Type.String({ description: 'The address it was (or will be) sent to.' }),
    outcome: RecipientOutcome,
    error: Nullable(Type.String({ description: "Why it failed: the mail server's answer where it gave one." })),
    sent_at: Nullable(Timestamp()),
  },
  { additionalProperties: false, description: 'One recipient of an email message.' },
);

export const ListRecipientsQuery = Type.Object({ ...PageQuery, outcome: Type.Optional(RecipientOutcome) }, { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ EmailMessage, CreateEmailMessage, UpdateEmailMessage, UpsertEmailMessage, EmailMessageRecipient: Recipient });
