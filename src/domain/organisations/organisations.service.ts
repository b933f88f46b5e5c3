// Organisations and the host-name → organisation lookup that runs on every request (CONTRACT: Organisations).
import type { Db } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { newId } from '../../ids.ts';
import { organisationsRepository, type Organisation } from './organisations.repository.ts';

export type Plan = Organisation['plan'];
export const plans: readonly Plan[] = ['standard', 'no-api'];

/**
 * Addresses change rarely and are read on every request, so lookups are cached briefly. Another process's
 * change (the CLI's `org update`) is seen within the TTL; this process's own changes invalidate at once.
 */
const ADDRESS_CACHE_TTL_MS = 2_000;

export function normaliseAddress(host: string): string {
  // Port ignored (CONTRACT); IPv6 literals keep their brackets.
  const h = host.trim().toLowerCase();
  if (h.startsWith('[')) return h.slice(0, h.indexOf(']') + 1);
  const colon = h.indexOf(':');
  return colon === -1 ? h : h.slice(0, colon);
}

export function createOrganisationService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const cache = new Map<string, { org: Organisation | undefined; until: number }>();

  async function findByAddress(address: string): Promise<Organisation | undefined> {
    const now = Date.now();
    const hit = cache.get(address);
    if (hit && hit.until > now) return hit.org;
    const org = await organisationsRepository.findByAddress(db, address);
    if (cache.size > 10_000) cache.clear();
    cache.set(address, { org, until: now + ADDRESS_CACHE_TTL_MS });
    return org;
  }

  async function create(input: { address: string; name: string; plan?: Plan }): Promise<Organisation> {
    const at = clock.now().toISOString();
    const org: Organisation = { id: newId(), address: normaliseAddress(input.address), name: input.name, plan: input.plan ?? 'standard', created_at: at, updated_at: at };
    await organisationsRepository.insert(db, org);
    cache.delete(org.address);
    return org;
  }

  async function update(address: string, patch: { name?: string; plan?: Plan }): Promise<Organisation | undefined> {
    const org = await organisationsRepository.findByAddress(db, normaliseAddress(address));
    if (!org) return undefined;
    await organisationsRepository.update(db, org.id, { ...patch, updated_at: clock.now().toISOString() });
    cache.delete(org.address);
    return organisationsRepository.findById(db, org.id);
  }

  return {
    findByAddress,
    findById: (id: string) => organisationsRepository.findById(db, id),
    create,
    update,
    isEmpty: async () => Number((await organisationsRepository.count(db)).n) === 0,
  };
}

export type OrganisationService = ReturnType<typeof createOrganisationService>;
