// The authorization server's changes in the audit log: a consent (the grant the consent page saves, in the
// page's audit scope) and each access token issued to a client. Both are written in the transaction that
// stores the record (auth/oauth/adapter.ts). The token's own value never appears: an entry names the client.
import type { AdapterPayload } from 'oidc-provider';
import type { Db } from '../db/database.ts';
import { auditChange, recordAudit } from './audit-log.ts';

/** Access tokens: one entry each, by the client they were issued to. */
const ISSUED_TOKENS = new Set(['AccessToken', 'ClientCredentials']);

/** Whether storing a record of `model` is a change the audit log records. */
export const isAuditedOAuthModel = (model: string): boolean => model === 'Grant' || ISSUED_TOKENS.has(model);

export async function auditOAuthRecord(tx: Db, organisationId: string, model: string, payload: AdapterPayload): Promise<void> {
  const clientId = payload.clientId ?? null;
  const target = { type: 'oauth_client', id: clientId };
  // A grant is saved by the consent page (its scope names the person) and again by the provider as tokens are
  // issued: only the first, in the consent's scope, is recorded.
  if (model === 'Grant') {
    await auditChange(tx, organisationId, target);
    return;
  }
  await recordAudit(tx, {
    organisationId,
    actor: { type: 'client', id: clientId, name: null },
    credential: { kind: 'oauth', id: null },
    via: 'oauth',
    action: model === 'ClientCredentials' ? 'oauth.token.client_credentials' : 'oauth.token',
    target: payload.accountId ? { type: 'user', id: payload.accountId } : target,
    outcome: 'success',
    status: 200,
    requestId: null,
    ip: null,
    userAgent: null,
    changedFields: [],
  });
}
