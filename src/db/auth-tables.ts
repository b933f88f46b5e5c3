// Row types of the tables behind signing in (sessions, the lockout). See tables.ts for the conventions.
import type { Timestamp } from './tables.ts';

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

export interface AuthTables {
  sessions: SessionsTable;
  login_failures: LoginFailuresTable;
}
