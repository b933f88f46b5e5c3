// oidc-provider's storage adapter, on our database (both dialects), one per (organisation, model). Several
// server processes share every record, so any of them can continue a flow another began.
// - Bearer values are never stored: records are keyed by the SHA-256 of their id, and for the models whose id
//   is a bearer value (codes, tokens, sessions) the `jti` is dropped from the stored payload and given back,
//   from the id asked for, on `find`.
// - Clients live in oauth_clients (clients.repository.ts), where the admin page and the CLI register them.
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { bumpCredentialEpoch } from '../../access/credential-epoch.ts';
import { hashRecordId, oauthRecordsRepository } from './oauth-records.repository.ts';
import type { OAuthClientStore } from './client-store.ts';
import { auditOAuthRecord, isAuditedOAuthModel } from '../../audit/oauth-audit.ts';

/** Models whose id is a secret its holder presents (a code, a token, a session cookie). */
const BEARER_MODELS = new Set(['AccessToken', 'AuthorizationCode', 'RefreshToken', 'ClientCredentials', 'RegistrationAccessToken', 'InitialAccessToken', 'DeviceCode', 'BackchannelAuthenticationRequest', 'PushedAuthorizationRequest', 'Session']);

/** Models whose records authenticate REST or MCP requests (directly, or by minting one that does). */
const TOKEN_MODELS = new Set(['AccessToken', 'ClientCredentials', 'RefreshToken']);

/** Our access tokens carry a prefix (docs/authentication.md#oauth-2: `atr_at_`); oidc-provider knows them without it. */
export const ACCESS_TOKEN_PREFIX = 'atr_at_';
export const withoutTokenPrefix = (id: string): string => (id.startsWith(ACCESS_TOKEN_PREFIX) ? id.slice(ACCESS_TOKEN_PREFIX.length) : id);

export interface AdapterDeps {
  db: Db;
  clock: Clock;
  organisationId: string;
  clients: OAuthClientStore;
}

export function createAdapterFactory(deps: AdapterDeps): (model: string) => Adapter {
  const { db, clock, organisationId } = deps;
  return (model: string): Adapter => {
    if (model === 'Client') return deps.clients.adapterFor(organisationId);
    const bearer = BEARER_MODELS.has(model);
    const key = (id: string) => hashRecordId(withoutTokenPrefix(id));

    function revive(row: { payload: string; expires_at: string | null; consumed_at: string | null } | undefined, id?: string): AdapterPayload | undefined {
      if (!row) return undefined;
      if (row.expires_at !== null && Date.parse(row.expires_at) <= clock.now().getTime()) return undefined;
      const payload = JSON.parse(row.payload) as AdapterPayload;
      if (id !== undefined && bearer) payload.jti = withoutTokenPrefix(id);
      if (row.consumed_at !== null) payload.consumed = row.consumed_at;
      return payload;
    }

    return {
      async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
        const { jti: _jti, ...rest } = payload;
        const record = {
          model,
          id_hash: key(id),
          organisation_id: organisationId,
          client_id: payload.clientId ?? null,
          account_id: payload.accountId ?? null,
          // A grant's own record answers to its id, so revoking the grant removes it with what it issued.
          grant_id: model === 'Grant' ? id : (payload.grantId ?? null),
          uid: payload.uid ?? null,
          expires_at: expiresIn ? new Date(clock.now().getTime() + expiresIn * 1000).toISOString() : null,
          consumed_at: null,
          payload: JSON.stringify(bearer ? rest : payload),
        };
        if (!isAuditedOAuthModel(model)) return void (await oauthRecordsRepository.upsert(db, record));
        // A consent or an issued token commits with its audit entry.
        await db.transaction().execute(async (tx) => {
          await oauthRecordsRepository.upsert(tx, record);
          await auditOAuthRecord(tx, organisationId, model, payload);
        });
      },
      async find(id: string) {
        return revive(await oauthRecordsRepository.find(db, organisationId, model, key(id)), id);
      },
      async findByUid(uid: string) {
        // Sessions are found by uid only to check that one still exists; their cookie value is not kept.
        return revive(await oauthRecordsRepository.findByUid(db, organisationId, model, uid));
      },
      async findByUserCode() {
        return undefined;
      },
      async consume(id: string) {
        await oauthRecordsRepository.consume(db, organisationId, model, key(id), nowIso(clock));
      },
      async destroy(id: string) {
        if (!TOKEN_MODELS.has(model)) return oauthRecordsRepository.destroy(db, organisationId, model, key(id));
        // A revoked token may sit in a process's credential cache: the bump ends it there on the next request.
        await db.transaction().execute(async (tx) => {
          await oauthRecordsRepository.destroy(tx, organisationId, model, key(id));
          await bumpCredentialEpoch(tx, organisationId);
        });
      },
      async revokeByGrantId(grantId: string) {
        await db.transaction().execute(async (tx) => {
          await oauthRecordsRepository.destroyGrant(tx, organisationId, grantId);
          await bumpCredentialEpoch(tx, organisationId);
        });
      },
    };
  };
}
