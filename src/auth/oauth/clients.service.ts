// Registering OAuth clients (docs/authentication.md#oauth-2; the admin page and `atrium oauth-client create` call this).
// A confidential client's secret is shown once and kept only as its SHA-256, like an API key.
import { createHash, randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { requireApiEntitlement } from '../../domain/organisations/entitlement.ts';
import { peopleRepository } from '../../domain/people/people.repository.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, type FieldError } from '../../errors/api-error.ts';
import type { Revisions } from '../../operations/revisions.ts';
import { newId } from '../../ids.ts';
import { oauthClientsRepository, type OAuthClientRow } from './clients.repository.ts';
import type { CreateOAuthClient } from './clients.schemas.ts';
import { oauthRecordsRepository } from './oauth-records.repository.ts';
import { bumpCredentialEpoch } from '../../access/credential-epoch.ts';
import { redirectUriProblem } from './redirect-uris.ts';

export type CreateOAuthClientInput = Static<typeof CreateOAuthClient>;

export const hashClientSecret = (secret: string): string => createHash('sha256').update(secret).digest('hex');
export const generateClientId = (): string => `atr_ci_${randomBytes(16).toString('base64url')}`;
const generateClientSecret = (): string => `atr_cs_${randomBytes(32).toString('base64url')}`;

export interface RegisteredClient {
  id: string;
  client_id: string;
  client_secret?: string;
}

export function createOAuthClientService(deps: { db: Db; clock: Clock; events: EventRecorder; revisions: Revisions }) {
  const { db, clock, events, revisions } = deps;

  /** The rules the schema cannot say; a 422 naming each field, as a request body would get. */
  async function check(tx: Db, organisationId: string, input: CreateOAuthClientInput): Promise<void> {
    const errors: FieldError[] = [];
    const grants = new Set(input.grant_types);
    if (grants.has('authorization_code') && input.redirect_uris.length === 0) {
      errors.push({ path: '/redirect_uris', code: 'required', detail: 'The authorization_code grant needs at least one redirect URI.' });
    }
    input.redirect_uris.forEach((uri, i) => {
      const problem = redirectUriProblem(uri);
      if (problem) errors.push({ path: `/redirect_uris/${i}`, code: 'invalid_format', detail: `${uri} ${problem}.` });
    });
    if (grants.has('client_credentials')) {
      if (input.type === 'public') errors.push({ path: '/grant_types', code: 'invalid_value', detail: 'A public client cannot use client_credentials: it has no secret to prove who it is.' });
      if (input.service_person_id === undefined) errors.push({ path: '/service_person_id', code: 'required', detail: 'client_credentials tokens act as a service person: choose one.' });
    }
    if (input.service_person_id !== undefined && !(await peopleRepository.findById(tx, organisationId, input.service_person_id))) {
      errors.push({ path: '/service_person_id', code: 'not_found', detail: 'No such person in this organisation.' });
    }
    if (errors.length > 0) throw new ApiError('validation.invalid_body', errors.map((e) => e.detail).join(' '), { errors });
  }

  return {
    async create(organisationId: string, createdBy: string | null, input: CreateOAuthClientInput): Promise<RegisteredClient> {
      return db.transaction().execute(async (tx) => {
        await requireApiEntitlement(tx, organisationId, 'OAuth clients');
        await check(tx, organisationId, input);
        const at = nowIso(clock);
        const secret = input.type === 'confidential' ? generateClientSecret() : undefined;
        const row: OAuthClientRow = {
          id: newId(),
          organisation_id: organisationId,
          client_id: generateClientId(),
          name: input.name,
          type: input.type,
          secret_hash: secret === undefined ? null : hashClientSecret(secret),
          redirect_uris: JSON.stringify(input.redirect_uris),
          grant_types: JSON.stringify(input.grant_types),
          scopes: JSON.stringify(input.scopes),
          service_person_id: input.service_person_id ?? null,
          service_version: revisions.current,
          self_registered: false,
          metadata: '{}',
          created_by: createdBy,
          created_at: at,
          updated_at: at,
        };
        await oauthClientsRepository.insert(tx, row);
        await events.record(tx, organisationId, 'oauth_client.created', { id: row.id, client_id: row.client_id, summary: `OAuth client ${JSON.stringify(row.name)} (${row.type}) registered.` });
        return { id: row.id, client_id: row.client_id, ...(secret ? { client_secret: secret } : {}) };
      });
    },

    list: (organisationId: string) => oauthClientsRepository.list(db, organisationId),
    findByClientId: (organisationId: string, clientId: string) => oauthClientsRepository.findByClientId(db, organisationId, clientId),
    find: (organisationId: string, id: string) => oauthClientsRepository.findById(db, organisationId, id),

    /** A new secret; the old one stops working at once. */
    async rotateSecret(organisationId: string, id: string): Promise<RegisteredClient> {
      return db.transaction().execute(async (tx) => {
        const row = await oauthClientsRepository.findById(tx, organisationId, id);
        if (!row) throw new ApiError('oauth_client.not_found', 'This organisation has no such OAuth client.');
        if (row.type !== 'confidential') throw new ApiError('oauth_client.public', 'A public client has no secret to rotate.');
        const secret = generateClientSecret();
        await oauthClientsRepository.setSecretHash(tx, organisationId, id, hashClientSecret(secret), nowIso(clock));
        await events.record(tx, organisationId, 'oauth_client.secret_rotated', { id, client_id: row.client_id, summary: 'OAuth client secret rotated; the previous one no longer works.' });
        return { id, client_id: row.client_id, client_secret: secret };
      });
    },

    /** Deleting a client revokes everything it holds (grants, codes, tokens) in the same transaction. */
    async remove(organisationId: string, id: string): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const row = await oauthClientsRepository.findById(tx, organisationId, id);
        if (!row) return false;
        await oauthRecordsRepository.destroyAllOfClient(tx, organisationId, row.client_id);
        await oauthClientsRepository.delete(tx, organisationId, row.client_id);
        await bumpCredentialEpoch(tx, organisationId);
        await events.record(tx, organisationId, 'oauth_client.deleted', { id, client_id: row.client_id, summary: `OAuth client ${JSON.stringify(row.name)} deleted; its tokens are revoked.` });
        return true;
      });
    },
  };
}

export type OAuthClientService = ReturnType<typeof createOAuthClientService>;
