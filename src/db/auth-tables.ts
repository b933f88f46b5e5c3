// Row types of the tables behind signing in (sessions, the lockout). See tables.ts for the conventions.
import type { Timestamp } from './column-values.ts';

export interface SessionsTable {
  id: string;
  /** sha256 of the cookie's token, hex. */
  token_hash: string;
  organisation_id: string;
  person_id: string;
  created_at: Timestamp;
  last_seen_at: Timestamp;
  /** The absolute end (12 hours after sign-in); the idle end is last_seen_at + 2 hours. */
  expires_at: Timestamp;
  flash: string | null;
}

export interface LoginFailuresTable {
  id: string;
  organisation_id: string;
  email: string;
  client_address: string;
  failed_at: Timestamp;
}

export interface OAuthClientsTable {
  id: string;
  organisation_id: string;
  /** The public identifier clients send (`client_id`). */
  client_id: string;
  name: string;
  type: 'confidential' | 'public';
  /** sha256 of the client secret, hex; null for public clients. */
  secret_hash: string | null;
  /** JSON arrays. */
  redirect_uris: string;
  grant_types: string;
  scopes: string;
  /** The person client-credentials tokens act as. */
  service_person_id: string | null;
  /** The revision pinned at registration (spec: Versioning 3). */
  service_version: string;
  self_registered: boolean | number;
  /** JSON: further RFC 7591 metadata of a self-registered client (client_name, logo_uri, …). */
  metadata: string;
  created_by: string | null;
  created_at: Timestamp;
  updated_at: Timestamp;
}

/** One record of an organisation's authorization server (oidc-provider models other than Client). */
export interface OAuthRecordsTable {
  model: string;
  /** sha256 of the model instance's id, hex: the id of a token or a code is its bearer value. */
  id_hash: string;
  organisation_id: string;
  client_id: string | null;
  account_id: string | null;
  grant_id: string | null;
  uid: string | null;
  expires_at: Timestamp | null;
  consumed_at: Timestamp | null;
  /** JSON, without `jti` (the id itself). */
  payload: string;
}

export interface McpSettingsTable {
  organisation_id: string;
  enabled: boolean | number;
  allow_self_registration: boolean | number;
  /** JSON array of tool names switched on. */
  tools_on: string;
  /** JSON array of the tool names the administrator decided about (null: all of them). */
  tools_known: string | null;
  updated_at: Timestamp;
}

/** One row per used confirmation of a destructive MCP tool (its nonce), kept until the confirmation expires. */
export interface McpConfirmationsUsedTable {
  nonce: string;
  organisation_id: string;
  used_at: Timestamp;
  expires_at: Timestamp;
}

export interface AuthTables {
  mcp_settings: McpSettingsTable;
  mcp_confirmations_used: McpConfirmationsUsedTable;
  sessions: SessionsTable;
  login_failures: LoginFailuresTable;
  oauth_clients: OAuthClientsTable;
  oauth_records: OAuthRecordsTable;
}
