// Row type of the audit log (src/audit/). See tables.ts for the conventions.
import type { Json, Timestamp } from './column-values.ts';

export interface AuditEventsTable {
  id: string;
  organisation_id: string;
  occurred_at: Timestamp;
  actor_type: 'user' | 'client' | 'system';
  actor_id: string | null;
  actor_name: string | null;
  credential_kind: 'api_key' | 'oauth' | 'session' | 'cli' | null;
  credential_id: string | null;
  via: 'rest' | 'mcp' | 'admin' | 'cli' | 'oauth' | 'sign_in';
  action: string;
  target_type: string | null;
  target_id: string | null;
  outcome: 'success' | 'refused' | 'failed';
  status: number;
  request_id: string | null;
  ip: string | null;
  user_agent: string | null;
  /** JSON array of field names, never values. */
  changed_fields: Json;
}
