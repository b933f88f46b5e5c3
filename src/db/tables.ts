// Row types of every table, as Kysely sees them. Conventions shared by both engines:
// - ids are UUIDv7 strings (uuid on PostgreSQL, text on SQLite);
// - timestamps are RFC 3339 UTC strings with `Z` (timestamptz on PostgreSQL, text on SQLite);
// - booleans are boolean on PostgreSQL and 0/1 on SQLite, hence `Bool`; read them through Boolean();
// - structured values are JSON text (`Json`), parsed by the repository that owns the column.
import type { AuthTables } from './auth-tables.ts';
export type Bool = boolean | number;
export type Json = string;
export type Timestamp = string;

export interface OrganisationsTable {
  id: string;
  address: string;
  name: string;
  plan: 'standard' | 'no-api';
  /** Bumped with every change that affects authentication (src/auth/credential-epoch.ts). */
  credentials_epoch: number;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PeopleTable {
  id: string;
  organisation_id: string;
  email: string;
  name: string;
  password_hash: string | null;
  /** JSON array of built-in role names. */
  roles: Json;
  is_platform_admin: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Removed: signs in no more; its sessions, keys and tokens stop working at once. */
  deleted_at: Timestamp | null;
}

export interface ApiKeysTable {
  id: string;
  organisation_id: string;
  person_id: string;
  name: string;
  mode: 'live' | 'test';
  /** sha256 of the whole key, hex. The key itself is never stored. */
  key_hash: string;
  /** First characters of the key, shown in listings so people can tell keys apart. */
  display_prefix: string;
  scopes: Json;
  service_version: string;
  created_at: Timestamp;
  expires_at: Timestamp | null;
  revoked_at: Timestamp | null;
  last_used_at: Timestamp | null;
}

export interface CategoriesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  parent_id: string | null;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface CoursesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  category_id: string | null;
  fullname: string;
  shortname: string;
  visible: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface SectionsTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  course_id: string;
  parent_section_id: string | null;
  sort_key: string;
  title: string | null;
  summary: Json | null;
  visible: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface IdempotencyRecordsTable {
  organisation_id: string;
  credential_id: string;
  idempotency_key: string;
  /** sha256 of method, path, query and body: a reused key with another request is a 409. */
  fingerprint: string;
  response_status: number;
  response_body: Json | null;
  created_at: Timestamp;
  expires_at: Timestamp;
}

export interface DeletionsTable {
  id: string;
  organisation_id: string;
  resource_type: string;
  resource_id: string;
  external_id: string | null;
  deleted_at: Timestamp;
}

export interface DeploymentSecretsTable {
  name: string;
  value: string;
}

export interface OutboxEventsTable {
  id: string;
  organisation_id: string;
  type: string;
  occurred_at: Timestamp;
  /** JSON: identifiers and a short summary (spec: Events 5). */
  data: Json;
  dispatched_at: Timestamp | null;
}

export interface OrganisationExtensionsTable {
  organisation_id: string;
  extension: string;
  enabled: Bool;
  updated_at: Timestamp;
}

export interface EnrolmentMethodsTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  course_id: string;
  /** The enrolment-method extension's name: manual, self, guest, cohort. */
  type: string;
  name: string | null;
  status: 'enabled' | 'disabled';
  /** Role given to people enrolled through the method. */
  role: string;
  /** JSON object; its keys depend on `type`. */
  settings: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

/** An activity of a course, of any activity type (`wiki`, `lesson`); type-specific rows hang from it. */
export interface ActivitiesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  course_id: string;
  section_id: string | null;
  /** The activity-type extension's name. */
  type: string;
  name: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface WikisTable {
  id: string;
  organisation_id: string;
  activity_id: string;
  mode: 'collaborative' | 'individual' | 'group';
  created_at: Timestamp;
}

export interface SubwikisTable {
  id: string;
  organisation_id: string;
  wiki_id: string;
  /** 'common', 'user:<person id>' or 'group:<group id>': one subwiki per owner. */
  owner_key: string;
  user_id: string | null;
  group_id: string | null;
  created_at: Timestamp;
}

/** The current version of a page; `course_id` … `subwiki_group_id` never change, so they are copied here. */
export interface WikiPagesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  activity_id: string;
  course_id: string;
  wiki_id: string;
  subwiki_id: string;
  subwiki_user_id: string | null;
  subwiki_group_id: string | null;
  title: string;
  /** Any JSON value, as JSON text. */
  body: Json;
  version: number;
  updated_by: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface WikiPageVersionsTable {
  id: string;
  organisation_id: string;
  wiki_page_id: string;
  version: number;
  title: string;
  body: Json;
  /** The version this one restored, when it was made by a restore. */
  restored_from: number | null;
  created_by: string;
  created_at: Timestamp;
}

/** A page of a lesson activity; `course_id` is the lesson's, copied here because it never changes. */
export interface LessonPagesTable {
  id: string;
  organisation_id: string;
  external_id: string | null;
  /** The lesson activity. */
  lesson_id: string;
  course_id: string;
  title: string;
  page_type: string;
  /** JSON `{format, content}` or null. */
  contents: Json | null;
  /** JSON array of answers (buttons on content pages, choices on question pages). */
  answers: Json;
  /** Orders the pages of a lesson (fractional index, compared as text). */
  sort_key: string;
  created_at: Timestamp;
  updated_at: Timestamp;
  deleted_at: Timestamp | null;
}

export interface EnrolmentsTable {
  id: string;
  organisation_id: string;
  enrolment_method_id: string;
  course_id: string;
  person_id: string;
  status: 'active' | 'suspended' | 'ended';
  created_at: Timestamp;
  ended_at: Timestamp | null;
}

export interface StorageTargetsTable {
  id: string;
  organisation_id: string;
  name: string;
  /** Relative to STORAGE_TARGETS_ROOT. */
  directory: string;
  /** At most one per organisation; none means the deployment's storage is the default. */
  is_default: Bool;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface FilesTable {
  id: string;
  organisation_id: string;
  /** Where the bytes were written; null: the deployment's storage. */
  storage_target_id: string | null;
  filename: string;
  content_type: string;
  size: number;
  sha256: string;
  created_by: string;
  created_at: Timestamp;
}

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

export interface Tables extends AuthTables {
  email_messages: EmailMessagesTable;
  email_message_recipients: EmailMessageRecipientsTable;
  mail_log: MailLogTable;
  webhook_subscriptions: WebhookSubscriptionsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_delivery_attempts: WebhookDeliveryAttemptsTable;
  email_templates: EmailTemplatesTable;
  email_template_versions: EmailTemplateVersionsTable;
  platform_email_templates: PlatformEmailTemplatesTable;
  platform_email_template_versions: PlatformEmailTemplateVersionsTable;
  storage_targets: StorageTargetsTable;
  files: FilesTable;
  enrolment_methods: EnrolmentMethodsTable;
  enrolments: EnrolmentsTable;
  organisation_extensions: OrganisationExtensionsTable;
  outbox_events: OutboxEventsTable;
  deployment_secrets: DeploymentSecretsTable;
  idempotency_records: IdempotencyRecordsTable;
  deletions: DeletionsTable;
  organisations: OrganisationsTable;
  people: PeopleTable;
  api_keys: ApiKeysTable;
  categories: CategoriesTable;
  courses: CoursesTable;
  sections: SectionsTable;
  activities: ActivitiesTable;
  wikis: WikisTable;
  subwikis: SubwikisTable;
  wiki_pages: WikiPagesTable;
  wiki_page_versions: WikiPageVersionsTable;
  lesson_pages: LessonPagesTable;
}
