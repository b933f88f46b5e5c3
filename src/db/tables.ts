// Row types of every table, as Kysely sees them: the core tables here, the rest by area (content-tables.ts,
// messaging-tables.ts, auth-tables.ts), all gathered in `Tables`. Conventions shared by both engines:
// - ids are UUIDv7 strings (uuid on PostgreSQL, text on SQLite);
// - timestamps are RFC 3339 UTC strings with `Z` (timestamptz on PostgreSQL, text on SQLite);
// - booleans are boolean on PostgreSQL and 0/1 on SQLite, hence `Bool`; read them through Boolean();
// - structured values are JSON text (`Json`), parsed by the repository that owns the column.
import type { AuditEventsTable } from './audit-tables.ts';
import type { AuthTables } from './auth-tables.ts';
import type { Bool, Json, Timestamp } from './column-values.ts';
import type { ActivitiesTable, CategoriesTable, CoursesTable, EnrolmentMethodsTable, EnrolmentsTable, FilesTable, LessonPagesTable, SectionsTable, StorageTargetsTable, SubwikisTable, WikiPagesTable, WikiPageVersionsTable, WikisTable } from './content-tables.ts';
import type { EmailMessageRecipientsTable, EmailMessagesTable, EmailTemplatesTable, EmailTemplateVersionsTable, MailLogTable, PlatformEmailTemplatesTable, PlatformEmailTemplateVersionsTable, WebhookDeliveriesTable, WebhookDeliveryAttemptsTable, WebhookSubscriptionsTable } from './messaging-tables.ts';

export type * from './column-values.ts';
export type * from './content-tables.ts';
export type * from './messaging-tables.ts';

export interface OrganisationsTable {
  id: string;
  address: string;
  name: string;
  plan: 'standard' | 'no-api';
  /** Bumped with every change that affects authentication (src/access/credential-epoch.ts). */
  credentials_epoch: number;
  /** IANA time zone name. */
  timezone: string;
  /** BCP 47 language tag. */
  default_language: string;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface PeopleTable {
  id: string;
  organisation_id: string;
  email: string;
  name: string;
  password_hash: string | null;
  /** JSON array of role keys: built-in ones and the organisation's custom roles. */
  roles: Json;
  is_platform_admin: Bool;
  external_id: string | null;
  /** `suspended`: signs in no more and its sessions, keys and tokens are refused, until made active again. */
  status: 'active' | 'suspended';
  last_sign_in_at: Timestamp | null;
  created_at: Timestamp;
  updated_at: Timestamp;
  /** Removed: signs in no more; its sessions, keys and tokens stop working at once. */
  deleted_at: Timestamp | null;
}

export interface CustomRolesTable {
  id: string;
  organisation_id: string;
  key: string;
  name: string;
  /** JSON array of organisation capability names. */
  capabilities: Json;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface InvitationsTable {
  id: string;
  organisation_id: string;
  person_id: string;
  token_hash: string;
  created_at: Timestamp;
  expires_at: Timestamp;
  used_at: Timestamp | null;
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

export interface IdempotencyRecordsTable {
  organisation_id: string;
  credential_id: string;
  idempotency_key: string;
  /** sha256 of method, path, query and body: a reused key with another request is a 409. */
  fingerprint: string;
  response_status: number;
  response_body: Json | null;
  /** The body's JSON text compressed (Brotli), when it was large; `response_body` is then null. */
  response_body_packed: Uint8Array | null;
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

export interface Tables extends AuthTables {
  audit_events: AuditEventsTable;
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
  custom_roles: CustomRolesTable;
  invitations: InvitationsTable;
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
