// Organisations and the host-name → organisation lookup that runs on every request (docs/conventions.md#addresses-and-requests).
import type { Db } from '../../db/database.ts';
import { type Clock, nowIso } from '../../clock.ts';
import { newId } from '../../ids.ts';
import { bumpCredentialEpoch } from '../../access/credential-epoch.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { auditChange } from '../../audit/audit-log.ts';
import { organisationsRepository, type Organisation } from './organisations.repository.ts';
import type { MaybeAsync } from '../../maybe-async.ts';

/** What `PATCH /organisation` may change. */
export type OrganisationSettings = Partial<Pick<Organisation, 'name' | 'timezone' | 'default_language'>>;

export type Plan = Organisation['plan'];
export const plans: readonly Plan[] = ['standard', 'no-api'];

export function normaliseAddress(host: string): string {
  // Port ignored (docs/conventions.md#addresses-and-requests); IPv6 literals keep their brackets.
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.indexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

export function createOrganisationService(deps: { db: Db; clock: Clock; events: EventRecorder }) {
  const { db, clock } = deps;

  /**
   * The request's one tenancy read, never cached: it returns the plan (entitlement) and the credentials epoch
   * as they are now, so a change another process committed applies from the next request on
   * (src/access/credential-epoch.ts).
   */
  function findByAddress(address: string): MaybeAsync<Organisation | undefined> {
    return organisationsRepository.findByAddress(db, address);
  }

  async function create(input: { address: string; name: string; plan?: Plan }): Promise<Organisation> {
    const at = nowIso(clock);
    const org: Organisation = {
      id: newId(),
      address: normaliseAddress(input.address),
      name: input.name,
      plan: input.plan ?? 'standard',
      credentials_epoch: 0,
      timezone: 'UTC',
      default_language: 'en',
      created_at: at,
      updated_at: at,
    };
    await db.transaction().execute(async (tx) => {
      await organisationsRepository.insert(tx, org);
      // The operator's `atrium org create` is the organisation's first audit entry.
      await auditChange(tx, org.id, { type: 'organisation', id: org.id });
    });
    return org;
  }

  async function update(address: string, patch: { name?: string; plan?: Plan }): Promise<Organisation | undefined> {
    return db.transaction().execute(async (tx) => {
      const org = await organisationsRepository.findByAddress(tx, normaliseAddress(address));
      if (!org) return undefined;
      await organisationsRepository.update(tx, org.id, { ...patch, updated_at: nowIso(clock) });
      // The plan is the API entitlement: what a cached credential may do changes with it.
      if (patch.plan !== undefined && patch.plan !== org.plan) await bumpCredentialEpoch(tx, org.id);
      await auditChange(tx, org.id, { type: 'organisation', id: org.id });
      return organisationsRepository.findById(tx, org.id);
    });
  }

  /** Name, time zone, default language, in the caller's transaction, with its event; a change to nothing is none. */
  async function updateSettings(tx: Db, organisationId: string, settings: OrganisationSettings): Promise<Organisation> {
    const org = (await organisationsRepository.findById(tx, organisationId))!;
    const changes = Object.fromEntries(Object.entries(settings).filter(([k, v]) => v !== undefined && v !== org[k as keyof OrganisationSettings])) as OrganisationSettings;
    if (Object.keys(changes).length === 0) return org;
    const updated = { ...org, ...changes, updated_at: nowIso(clock) };
    await organisationsRepository.update(tx, organisationId, { ...changes, updated_at: updated.updated_at });
    await deps.events.record(tx, organisationId, 'organisation.updated', { id: organisationId, summary: `Organisation settings changed (${Object.keys(changes).join(', ')}).` });
    return updated;
  }

  return {
    updateSettings,
    findByAddress,
    /** A statement that fails unless the organisation is still the cached copy, sent with a request's first statement or its COMMIT (src/http/tenancy-cache.ts). */
    stillAsCachedQuery: (address: string, cached: Organisation) => organisationsRepository.stillAsCachedQuery(db, address, cached),
    findById: (id: string) => organisationsRepository.findById(db, id),
    create,
    update,
    isEmpty: async () => Number((await organisationsRepository.count(db)).n) === 0,
  };
}

export type OrganisationService = ReturnType<typeof createOrganisationService>;
