import Type from 'typebox';
import { ExternalId, nameSchemas, Nullable, Timestamp, Uuid } from '../../operations/schemas.ts';

// Filters match identifiers in an event's data: `{"course_id": "…"}` or `{"course_id": ["…", "…"]}`.
// An event passes when every key is present in its data with one of the given values.
const FilterValue = Type.Union([Type.String({ minLength: 1, maxLength: 255 }), Type.Array(Type.String({ minLength: 1, maxLength: 255 }), { minItems: 1, maxItems: 100 })]);
export const Filters = Nullable(
  Type.Record(Type.String({ pattern: '^[a-z][a-z0-9_]{0,62}$' }), FilterValue, {
    maxProperties: 20,
    additionalProperties: false,
    description: 'Keys name identifiers in the event’s data (e.g. `course_id`); a value is one id or a list of ids. Every key must match.',
  }),
);

const Url = Type.String({ format: 'uri', maxLength: 2000, pattern: '^https://', description: 'An https endpoint, at most 2000 characters; it receives a `webhook.ping` before the subscription is enabled.' });
const EventTypes = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 100,
  description: 'Event names from `GET /event_types`, `area.*` for an area, or `*` for everything.',
});
const Emails = Type.Array(Type.String({ format: 'email', maxLength: 254 }), { maxItems: 20 });
const RatePerMinute = Type.Integer({ minimum: 1, maximum: 6000, description: 'Deliveries per minute at most; more are delayed, never dropped.' });

export const WebhookSubscription = Type.Object(
  {
    id: Uuid(),
    external_id: Nullable(Type.String()),
    url: Type.String(),
    event_types: Type.Array(Type.String()),
    filters: Filters,
    description: Nullable(Type.String()),
    status: Type.Union([Type.Literal('enabled'), Type.Literal('disabled'), Type.Literal('auto_disabled')]),
    notification_emails: Type.Array(Type.String()),
    rate_limit_per_minute: Type.Integer(),
    payload_version: Type.Integer(),
    verified_at: Nullable(Timestamp()),
    consecutive_failures: Type.Integer(),
    last_success_at: Nullable(Timestamp()),
    disabled_reason: Nullable(Type.String()),
    created_at: Timestamp(),
    updated_at: Timestamp(),
  },
  { additionalProperties: false, description: 'A webhook subscription.' },
);

export const WebhookSubscriptionWithSecret = Type.Object(
  { ...WebhookSubscription.properties, secret: Type.String({ description: '`whsec_` + base64; returned only here: store it.' }) },
  { additionalProperties: false, description: 'The new subscription with its signing secret.' },
);

export const CreateWebhookSubscription = Type.Object(
  {
    url: Url,
    event_types: EventTypes,
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    notification_emails: Type.Optional(Emails),
    rate_limit_per_minute: Type.Optional(RatePerMinute),
    filters: Type.Optional(Filters),
    external_id: Type.Optional(Nullable(ExternalId)),
  },
  { additionalProperties: false },
);

export const UpdateWebhookSubscription = Type.Object(
  {
    url: Type.Optional(Url),
    event_types: Type.Optional(EventTypes),
    description: Type.Optional(Nullable(Type.String({ maxLength: 1000 }))),
    notification_emails: Type.Optional(Emails),
    rate_limit_per_minute: Type.Optional(RatePerMinute),
    filters: Type.Optional(Filters),
    status: Type.Optional(Type.Union([Type.Literal('enabled'), Type.Literal('disabled')], { description: 'Enable (also after auto_disabled) or disable.' })),
  },
  { additionalProperties: false, description: 'Partial update. A new URL is verified with a ping first.' },
);

export const RotatedSecret = Type.Object(
  {
    secret: Type.String({ description: 'The new secret. The previous one keeps signing (as a second `v1` signature) until `previous_secret_expires_at`.' }),
    previous_secret_expires_at: Timestamp(),
  },
  { additionalProperties: false },
);

export const WebhookDelivery = Type.Object(
  {
    id: Uuid(),
    event_id: Uuid({ description: 'The `webhook-id` header: the same on every attempt and resend.' }),
    event_type: Type.String(),
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')]),
    attempts: Type.Integer(),
    next_attempt_at: Nullable(Timestamp()),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    delivered_at: Nullable(Timestamp()),
    created_at: Timestamp(),
    attempt_log: Type.Array(
      Type.Object(
        {
          attempted_at: Timestamp(),
          status_code: Nullable(Type.Integer()),
          error: Nullable(Type.String()),
          duration_ms: Type.Integer(),
          response_body: Nullable(Type.String({ description: 'At most 2048 characters.' })),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false, description: 'One event sent to one subscription, with every attempt.' },
);

export const EventTypeEntry = Type.Object({ name: Type.String(), area: Type.String(), description: Type.String() }, { additionalProperties: false });

export const SubscriptionDeliveryParams = Type.Object({ id: Uuid(), delivery_id: Uuid() }, { additionalProperties: false });

// Their names in the OpenAPI document's components/schemas.
nameSchemas({ WebhookSubscription, WebhookSubscriptionWithSecret, CreateWebhookSubscription, UpdateWebhookSubscription, RotatedWebhookSecret: RotatedSecret, WebhookDelivery, EventType: EventTypeEntry });
