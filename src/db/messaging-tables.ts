// Row types of what the service sends: email templates and their versions, email messages and their
// recipients, the mail log, webhook subscriptions, deliveries and attempts. See tables.ts for the conventions.
import type { Json, Timestamp } from './column-values.ts';

export type TemplateScopeLevel = 'tenant' | 'category' | 'course' | 'activity';
export type TemplateVersionState = 'draft' | 'published' | 'archived';

/** An organisation's override of one catalog message at one scope and language. */
export interface EmailTemplatesTable {
  id: string;
  organisation_id: string;
  message_key: string;
  scope_level: TemplateScopeLevel;
  /** The category, course or activity; null at the tenant level (the organisation itself). */
  scope_id: string | null;
  language: string;
  created_at: Timestamp;
}

/** Columns every template version has, at both levels. At most one draft and one published per template. */
interface TemplateVersionColumns {
  id: string;
  template_id: string;
  version: number;
  state: TemplateVersionState;
  subject: string | null;
  preheader: string | null;
  /** JSON array of variable names. */
  variable_refs: Json;
  body: string | null;
  created_at: Timestamp;
  /** Last change of the draft's content; not part of the API. */
  updated_at: Timestamp;
  published_at: Timestamp | null;
}

export interface EmailTemplateVersionsTable extends TemplateVersionColumns {
  organisation_id: string;
  from_name: string | null;
  reply_to: string | null;
  text_part: string | null;
}

/** The deployment's own wording of a catalog message; belongs to no organisation. */
export interface PlatformEmailTemplatesTable {
  id: string;
  message_key: string;
  language: string;
  created_at: Timestamp;
}

export interface PlatformEmailTemplateVersionsTable extends TemplateVersionColumns {}

export interface WebhookSubscriptionsTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  url: string;
  /** JSON array of exact names, `area.*` or `*`. */
  event_types: Json;
  filters: Json | null;
  description: string | null;
  status: 'enabled' | 'disabled' | 'auto_disabled';
  notification_emails: Json;
  rate_limit_per_minute: number;
  payload_version: number;
  /** Encrypted with the deployment key (see src/crypto/secret-box.ts). */
  secret: string;
  previous_secret: string | null;
  previous_secret_expires_at: Timestamp | null;
  verified_at: Timestamp | null;
  consecutive_failures: number;
  last_success_at: Timestamp | null;
  disabled_reason: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface WebhookDeliveriesTable {
  id: string;
  organisation_id: string;
  subscription_id: string;
  event_id: string;
  event_type: string;
  /** The exact JSON body sent, so every attempt sends the same bytes. */
  payload: Json;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: number;
  first_attempt_at: Timestamp | null;
  next_attempt_at: Timestamp;
  leased_until: Timestamp | null;
  last_status_code: number | null;
  last_error: string | null;
  delivered_at: Timestamp | null;
  created_at: Timestamp;
}

export interface WebhookDeliveryAttemptsTable {
  id: string;
  delivery_id: string;
  attempted_at: Timestamp;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  response_body: string | null;
}

export type EmailMessageStatus = 'draft' | 'scheduled' | 'sending' | 'sent' | 'cancelled';
export type RecipientOutcome = 'pending' | 'sent' | 'failed';

/** A campaign message; its recipients are resolved from `audience` when sending starts. */
export interface EmailMessagesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  subject: string;
  /** JSON `{format, content}`. */
  body: Json;
  /** JSON `{type: 'people', person_ids}` or `{type: 'course', course_id, roles?}`. */
  audience: Json;
  send_at: Timestamp | null;
  status: EmailMessageStatus;
  sent_at: Timestamp | null;
  recipients_total: number | null;
  recipients_sent: number;
  recipients_failed: number;
  /** The worker claim in force while `sending` (see email-messages.sender.ts). */
  claim_token: string | null;
  lease_until: Timestamp | null;
  created_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface EmailMessageRecipientsTable {
  /** Derived from (message, person), so the same before and after sending starts. */
  id: string;
  organisation_id: string;
  email_message_id: string;
  person_id: string;
  address: string;
  name: string;
  outcome: RecipientOutcome;
  error: string | null;
  /** Set once, just before the mail goes to the transport; such a recipient is never sent again. */
  attempted_at: Timestamp | null;
  sent_at: Timestamp | null;
}

/** Mail the service would have sent, kept here when no SMTP server is configured (SMTP_URL unset). */
export interface MailLogTable {
  id: string;
  /** Null for mail that belongs to no organisation. */
  organisation_id: string | null;
  from_address: string;
  to_address: string;
  subject: string;
  text_body: string | null;
  html_body: string | null;
  created_at: Timestamp;
}
