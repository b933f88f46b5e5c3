// Issuing API keys and authenticating requests that present one.
import { timingSafeEqual } from 'node:crypto';
import type { Db } from '../db/database.ts';
import { type Clock, nowIso } from '../clock.ts';
import { newId } from '../ids.ts';
import { ApiError, fieldError } from '../errors/api-error.ts';
import type { Revisions } from '../operations/revisions.ts';
import { isScope, type Scope, capabilitiesOf } from '../access/capabilities.ts';
import { personCapabilities } from '../domain/roles/role-capabilities.ts';
import type { Actor, Authenticator } from '../access/actor.ts';
import { displayPrefix, generateApiKey, hashApiKey, isWellFormedApiKey, looksLikeApiKey } from './api-key-format.ts';
import { apiKeysRepository } from './api-keys.repository.ts';
import { bumpCredentialEpoch, createCredentialCache } from '../access/credential-epoch.ts';
import type { EventRecorder } from '../events/outbox.ts';
import { requireApiEntitlement } from '../domain/organisations/entitlement.ts';
import type { MaybeAsync } from '../maybe-async.ts';

/** last_used_at is advisory: writing it at most once a minute keeps the hot path free of writes. */
const LAST_USED_GRANULARITY_MS = 60_000;

/** A verified key, remembered while its organisation's credentials epoch stays put (credential-epoch.ts). */
interface VerifiedKey {
  actor: Actor;
  /** Milliseconds since the epoch, or null for a key that does not expire. */
  expiresAt: number | null;
  lastUsedAt: number;
}

export interface CreateApiKeyInput {
  organisationId: string;
  personId: string;
  name: string;
  scopes: string[];
  mode?: 'live' | 'test';
  serviceVersion?: string;
  expiresAt?: string | null;
}

export function createApiKeyService(deps: { db: Db; clock: Clock; revisions: Revisions; events: EventRecorder; onBackgroundError?: (err: unknown) => void }) {
  const { db, clock, revisions, events } = deps;

  async function create(input: CreateApiKeyInput): Promise<{ id: string; key: string }> {
    const bad = input.scopes.filter((s) => !isScope(s));
    if (bad.length > 0) throw fieldError('/scopes', 'invalid_value', `unknown scopes: ${bad.join(', ')}`);
    let revision = revisions.current;
    if (input.serviceVersion !== undefined) {
      const resolved = revisions.resolve(input.serviceVersion);
      if (!resolved) {
        const detail = `not a revision of this API: ${input.serviceVersion}`;
        throw new ApiError('versioning.invalid_revision', detail, { errors: [{ path: '/service_version', code: 'invalid_value', detail }] });
      }
      revision = resolved;
    }
    const mode = input.mode ?? 'live';
    const key = generateApiKey(mode);
    const id = newId();
    await db.transaction().execute(async (tx) => {
      await requireApiEntitlement(tx, input.organisationId, 'API keys');
      await apiKeysRepository.insert(tx, {
        id,
        organisation_id: input.organisationId,
        person_id: input.personId,
        name: input.name,
        mode,
        key_hash: hashApiKey(key),
        display_prefix: displayPrefix(key),
        scopes: JSON.stringify([...new Set(input.scopes)]),
        service_version: revision,
        created_at: nowIso(clock),
        expires_at: input.expiresAt ?? null,
        revoked_at: null,
        last_used_at: null,
      });
      await events.record(tx, input.organisationId, 'api_key.created', { id, person_id: input.personId, summary: `API key ${JSON.stringify(input.name)} (${mode}) created.` });
    });
    return { id, key };
  }

  // Keyed by the key itself, so that a hit costs neither the checksum nor the hash. It holds keys only in this
  // process's memory, where each request that presents one holds it anyway.
  const verified = createCredentialCache<VerifiedKey>();

  async function verify(token: string): Promise<VerifiedKey | undefined> {
    if (!isWellFormedApiKey(token)) throw new ApiError('auth.invalid_credential', 'The API key is malformed.');
    const hash = hashApiKey(token);
    const row = await apiKeysRepository.findByHashWithHolder(db, hash);
    // The index found the row by hash; the constant-time comparison keeps the final check free of timing signal.
    if (!row || !timingSafeEqual(Buffer.from(row.key_hash), Buffer.from(hash))) return undefined;
    if (row.revoked_at !== null) throw new ApiError('auth.revoked_credential', 'The API key has been revoked.');
    if (row.holder_removed_at !== null) throw new ApiError('auth.revoked_credential', 'The person this API key acts for has been removed.');
    if (row.holder_status !== 'active') throw new ApiError('auth.revoked_credential', 'The person this API key acts for is suspended.');
    return {
      actor: {
        kind: 'api_key',
        credentialId: row.id,
        organisationId: row.organisation_id,
        personId: row.person_id,
        scopes: new Set(JSON.parse(row.scopes) as Scope[]),
        capabilities: await personCapabilities(db, row.organisation_id, row.roles, row.is_platform_admin),
        pinnedRevision: row.service_version,
        mode: row.mode,
      },
      expiresAt: row.expires_at === null ? null : Date.parse(row.expires_at),
      lastUsedAt: row.last_used_at === null ? 0 : Date.parse(row.last_used_at),
    };
  }

  const authenticator: Authenticator = {
    accepts: looksLikeApiKey,
    authenticate(token: string, organisationId: string, credentialsEpoch: number): MaybeAsync<Actor> {
      const entry = verified.get(token, organisationId, credentialsEpoch);
      if (entry !== undefined) return actorOf(entry);
      return verify(token).then((found) => {
        // docs/authentication.md#credentials-scopes-capabilities-and-roles: a key of another organisation gets no hint that it exists elsewhere.
        if (!found || found.actor.organisationId !== organisationId) throw new ApiError('auth.invalid_credential', 'The API key is not valid for this organisation.');
        // The epoch this request read before the key was looked up: a revocation committed since then has
        // moved it, and the next request verifies again.
        verified.set(token, organisationId, credentialsEpoch, found);
        return actorOf(found);
      });
    },
  };

  /** A verified key's actor, unless it has expired; its last use is written at most once a granularity. */
  function actorOf(entry: VerifiedKey): Actor {
    const now = clock.now().getTime();
    if (entry.expiresAt !== null && entry.expiresAt <= now) throw new ApiError('auth.expired_credential', 'The API key has expired.');
    if (now - entry.lastUsedAt >= LAST_USED_GRANULARITY_MS) {
      entry.lastUsedAt = now;
      apiKeysRepository.touchLastUsed(db, entry.actor.credentialId, new Date(now).toISOString()).catch((err) => deps.onBackgroundError?.(err));
    }
    return entry.actor;
  }

  /** Refused on the very next request, by every process: the revocation bumps the credentials epoch with it. */
  async function revoke(organisationId: string, id: string): Promise<boolean> {
    return db.transaction().execute(async (tx) => {
      const result = await apiKeysRepository.revoke(tx, organisationId, id, nowIso(clock));
      if (Number(result.numUpdatedRows) === 0) return false;
      await bumpCredentialEpoch(tx, organisationId);
      await events.record(tx, organisationId, 'api_key.revoked', { id, summary: 'API key revoked.' });
      return true;
    });
  }

  return {
    create,
    revoke,
    authenticator,
    list: (organisationId: string) => apiKeysRepository.listForOrganisation(db, organisationId),
    find: (organisationId: string, id: string) => apiKeysRepository.findById(db, organisationId, id),
  };
}

export type ApiKeyService = ReturnType<typeof createApiKeyService>;
