// oidc-provider's Client model over oauth_clients: the clients an administrator registered (admin page, CLI)
// and those that registered themselves (RFC 7591). A confidential client's metadata carries the SHA-256 of its
// secret as `client_secret`; the HTTP layer hashes the secret a client presents before the provider compares
// them (oauth-requests.ts), so the secret itself is never stored.
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import type { Revisions } from '../../operations/revisions.ts';
import { newId } from '../../ids.ts';
import { scopes as allScopes } from '../../access/capabilities.ts';
import { oauthClientsRepository, type OAuthClientRow } from './clients.repository.ts';
import { bumpCredentialEpoch } from '../../access/credential-epoch.ts';

/** The columns we keep; everything else a self-registered client sent stays in `metadata`. */
const OWN_FIELDS = new Set(['client_id', 'client_secret', 'client_name', 'redirect_uris', 'grant_types', 'response_types', 'token_endpoint_auth_method', 'scope', 'client_id_issued_at']);

export function toClientMetadata(row: OAuthClientRow): AdapterPayload {
  const grants = JSON.parse(row.grant_types) as string[];
  const code = grants.includes('authorization_code');
  return {
    ...(JSON.parse(row.metadata) as Record<string, unknown>),
    client_id: row.client_id,
    client_name: row.name,
    ...(row.type === 'confidential' ? { client_secret: row.secret_hash!, token_endpoint_auth_method: 'client_secret_basic' } : { token_endpoint_auth_method: 'none' }),
    redirect_uris: JSON.parse(row.redirect_uris) as string[],
    // Refresh tokens come with the authorization code grant (docs/authentication.md#oauth-2: rotated on use).
    grant_types: code ? [...grants, 'refresh_token'] : grants,
    response_types: code ? ['code'] : [],
    scope: (JSON.parse(row.scopes) as string[]).join(' '),
  };
}

export function createOAuthClientStore(deps: { db: Db; clock: Clock; events: EventRecorder; revisions: Revisions }) {
  const { db, clock, events, revisions } = deps;

  /** A client that registered itself (only ever public, authorization code; checked in oauth-requests.ts). */
  async function registerItself(organisationId: string, metadata: AdapterPayload): Promise<void> {
    const at = nowIso(clock);
    const requested = typeof metadata.scope === 'string' ? metadata.scope.split(' ') : [];
    const row: OAuthClientRow = {
      id: newId(),
      organisation_id: organisationId,
      client_id: String(metadata.client_id),
      name: typeof metadata.client_name === 'string' && metadata.client_name.trim() !== '' ? metadata.client_name : 'Unnamed client',
      type: 'public',
      secret_hash: null,
      redirect_uris: JSON.stringify(metadata.redirect_uris ?? []),
      grant_types: JSON.stringify(['authorization_code']),
      scopes: JSON.stringify(requested.length > 0 ? requested : allScopes),
      service_person_id: null,
      service_version: revisions.current,
      self_registered: true,
      metadata: JSON.stringify(Object.fromEntries(Object.entries(metadata).filter(([k]) => !OWN_FIELDS.has(k)))),
      created_by: null,
      created_at: at,
      updated_at: at,
    };
    await db.transaction().execute(async (tx) => {
      await oauthClientsRepository.insert(tx, row);
      await events.record(tx, organisationId, 'oauth_client.created', { id: row.id, client_id: row.client_id, summary: `OAuth client ${JSON.stringify(row.name)} registered itself.` });
    });
  }

  return {
    adapterFor(organisationId: string): Adapter {
      return {
        async find(clientId: string) {
          const row = await oauthClientsRepository.findByClientId(db, organisationId, clientId);
          return row ? toClientMetadata(row) : undefined;
        },
        upsert: (_clientId: string, metadata: AdapterPayload) => registerItself(organisationId, metadata),
        async destroy(clientId: string) {
          await db.transaction().execute(async (tx) => {
            await oauthClientsRepository.delete(tx, organisationId, clientId);
            await bumpCredentialEpoch(tx, organisationId);
          });
        },
        async consume() {},
        async findByUid() {
          return undefined;
        },
        async findByUserCode() {
          return undefined;
        },
        async revokeByGrantId() {},
      };
    },
  };
}

export type OAuthClientStore = ReturnType<typeof createOAuthClientStore>;
