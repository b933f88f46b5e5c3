// OAuth access tokens (`atr_at_…`) on the REST API: the second Authenticator beside API keys, so the same auth
// hook checks both (one code path). A token acts as its person (authorization code) or as its client's service
// person (client credentials), with the token's scopes ∩ what that person may do; it is refused at once when
// revoked, expired, issued for another resource or organisation, or when its client or person is gone.
import { v5 as uuidv5 } from 'uuid';
import type { Clock } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { peopleRepository } from '../../domain/people/people.repository.ts';
import { ApiError } from '../../errors/api-error.ts';
import type { Revisions } from '../../operations/revisions.ts';
import type { Actor, Authenticator } from '../../access/actor.ts';
import { isScope, type Scope, capabilitiesOf } from '../../access/capabilities.ts';
import { personCapabilities } from '../../domain/roles/role-capabilities.ts';
import { createCredentialCache } from '../../access/credential-epoch.ts';
import { ACCESS_TOKEN_PREFIX, withoutTokenPrefix } from './adapter.ts';
import { accessTokensRepository } from './access-tokens.repository.ts';
import { hashRecordId } from './oauth-records.repository.ts';

/**
 * Idempotency keys and rate limits are per credential. A token's credential is its (client, person) pair,
 * stable across refreshes, as a UUID (v5 in a namespace of our own).
 */
const CREDENTIAL_NAMESPACE = '6d7a5c44-1f1e-4f0e-9a53-2f0c6a5e8b11';
export const oauthCredentialId = (clientId: string, personId: string): string => uuidv5(`${clientId} ${personId}`, CREDENTIAL_NAMESPACE);

export type TokenResource = 'api' | 'mcp';

/** The path of each resource at an organisation's origin (resources.ts: resourcesOf). */
const RESOURCE_PATHS: Record<TokenResource, string> = { api: '/api/v1', mcp: '/mcp' };

/**
 * Which of our resources the audiences name. Tokens are bound to their organisation (checked first), whose
 * authorization server issues them only for its own origin, so the path tells the resource apart.
 */
function resourcesNamed(audiences: unknown[]): Set<TokenResource> {
  const found = new Set<TokenResource>();
  for (const aud of audiences) {
    const path = typeof aud === 'string' ? URL.parse(aud)?.pathname : undefined;
    for (const [resource, p] of Object.entries(RESOURCE_PATHS) as Array<[TokenResource, string]>) if (path === p) found.add(resource);
  }
  return found;
}

export function createAccessTokenAuthenticator(deps: { db: Db; clock: Clock; revisions: Revisions }) {
  const { db, clock, revisions } = deps;

  /**
   * What a token was verified as, cached per process (docs/authentication.md#oauth-2: checked on every operation like an API key). The
   * organisation's credentials epoch, bumped with every revocation, client deletion and person removal, keeps the
   * cache honest across processes (src/access/credential-epoch.ts); the expiry is checked on every hit.
   */
  interface VerifiedToken {
    actor: Actor;
    /** The resources (RFC 8707) it was issued for: its organisation's API, or its MCP server. */
    resources: ReadonlySet<TokenResource>;
    expiresAt: number | null;
  }
  const verified = createCredentialCache<VerifiedToken>();

  async function verify(token: string, organisationId: string): Promise<VerifiedToken> {
    const row = await accessTokensRepository.findWithClient(db, hashRecordId(withoutTokenPrefix(token)));
    // docs/authentication.md#credentials-scopes-capabilities-and-roles: a token of one organisation is a 401 anywhere else, with no hint that it exists there.
    if (!row || row.organisation_id !== organisationId) throw new ApiError('auth.invalid_credential', 'The access token is not valid for this organisation.');
    const payload = JSON.parse(row.payload) as { aud?: string | string[]; scope?: string };
    // A client that is gone took its tokens with it; one resolved from a metadata document (an https client_id) has no row.
    const personId = row.model === 'ClientCredentials' ? row.service_person_id : row.account_id;
    if (personId === null || (row.client_row_id === null && !/^https:/.test(row.client_id ?? ''))) throw new ApiError('auth.revoked_credential', 'The client of this access token no longer exists.');
    const person = await peopleRepository.findById(db, organisationId, personId);
    if (!person) throw new ApiError('auth.revoked_credential', 'The person this access token acts for has been removed.');
    if (person.status !== 'active') throw new ApiError('auth.revoked_credential', 'The person this access token acts for is suspended.');
    return {
      resources: resourcesNamed(Array.isArray(payload.aud) ? payload.aud : [payload.aud]),
      expiresAt: row.expires_at === null ? null : Date.parse(row.expires_at),
      actor: {
        kind: 'oauth_token',
        credentialId: oauthCredentialId(row.client_id!, person.id),
        organisationId,
        personId: person.id,
        scopes: new Set((payload.scope ?? '').split(' ').filter(isScope) as Scope[]),
        capabilities: await personCapabilities(db, organisationId, person.roles, person.is_platform_admin),
        // spec: Versioning 3 — the revision pinned on the client at registration.
        pinnedRevision: row.service_version ?? revisions.current,
        mode: 'live',
      },
    };
  }

  /** The actor a token stands for, at this organisation, for `resource`; a 401 ApiError otherwise. */
  async function authenticate(token: string, organisationId: string, credentialsEpoch: number, resource: TokenResource): Promise<Actor> {
    let entry = verified.get(token, organisationId, credentialsEpoch);
    if (entry === undefined) {
      entry = await verify(token, organisationId);
      verified.set(token, organisationId, credentialsEpoch, entry);
    }
    if (entry.expiresAt !== null && entry.expiresAt <= clock.now().getTime()) throw new ApiError('auth.expired_credential', 'The access token has expired; get a new one (refresh token or client credentials).');
    if (!entry.resources.has(resource)) throw new ApiError('auth.invalid_credential', `The access token was issued for another resource; ask for one with resource={origin}${RESOURCE_PATHS[resource]}.`);
    return entry.actor;
  }

  const forRest: Authenticator = {
    accepts: (token) => token.startsWith(ACCESS_TOKEN_PREFIX),
    authenticate: (token, organisationId, credentialsEpoch) => authenticate(token, organisationId, credentialsEpoch, 'api'),
  };

  return { authenticate, authenticator: forRest };
}

export type AccessTokenAuthenticator = ReturnType<typeof createAccessTokenAuthenticator>;
