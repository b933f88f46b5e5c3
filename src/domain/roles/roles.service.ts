// Roles (docs/api-guide.md#users-roles-and-the-organisation): the built-in ones, defined in code and read-only, and an organisation's custom
// roles, each a named set of organisation capabilities. A change to a custom role bumps the credentials epoch
// in its transaction, so that every holder's cached credentials are verified again on the next request.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { newId } from '../../ids.ts';
import { capabilityDescriptions, isRoleName, organisationCapabilities, platformCapabilities, roleNames, roles as builtInRoles, type RoleName } from '../../access/capabilities.ts';
import { bumpCredentialEpoch } from '../../access/credential-epoch.ts';
import { ApiError } from '../../errors/api-error.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import { foundOr404 } from '../resource-rows.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { listPage } from '../../operations/listing.ts';
import type { CreateRole, Role, UpdateRole } from './roles.schemas.ts';
import { rolesRepository, type CustomRoleRow } from './roles.repository.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';

export type RoleView = Static<typeof Role>;

const builtInNames: Record<RoleName, string> = { admin: 'Administrator', manager: 'Manager', teacher: 'Teacher', integration: 'Integration' };

const builtInView = (key: RoleName): RoleView => ({ key, name: builtInNames[key], built_in: true, capabilities: [...builtInRoles[key]], created_at: null, updated_at: null });

const customView = (row: CustomRoleRow): RoleView => ({
  key: row.key,
  name: row.name,
  built_in: false,
  capabilities: JSON.parse(row.capabilities) as string[],
  created_at: row.created_at,
  updated_at: row.updated_at,
});

/** Every capability with its sentence (`GET /capabilities`). */
export const capabilityCatalog = () => [
  ...organisationCapabilities.map((name) => ({ name, description: capabilityDescriptions[name], platform: false })),
  ...platformCapabilities.map((name) => ({ name, description: capabilityDescriptions[name], platform: true })),
];

const builtIn = (key: string) => new ApiError('role.built_in', `The role ${key} is built in; it cannot change. Create a custom role instead.`);

export function createRoleService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder }) {
  const { clock, cursors, events } = deps;

  async function custom(db: Db, organisationId: string, key: string): Promise<CustomRoleRow> {
    if (isRoleName(key)) throw builtIn(key);
    return foundOr404(rolesRepository.findByKey(db, organisationId, key), 'role.not_found', `No role ${key} in this organisation.`);
  }

  /** Built-in roles first, then custom ones by key; the list is small, so a page is cut from all of it. */
  async function all(db: Db, organisationId: string): Promise<RoleView[]> {
    return [...roleNames.map(builtInView), ...(await rolesRepository.list(db, organisationId)).map(customView)];
  }

  return {
    all,

    async list(db: Db, organisationId: string, params: { limit?: number; cursor?: string }) {
      // A position that stays put when roles come and go: built-ins in their order, then custom roles by key.
      const positioned = (await all(db, organisationId)).map((v, i) => ({ view: v, id: v.built_in ? `0${i}:${v.key}` : `1:${v.key}` }));
      return listPage(cursors, {
        list: 'roles',
        organisationId,
        params,
        fetch: async (q) => positioned.filter((p) => !q.after || p.id > q.after[0]).slice(0, q.limit + 1),
        map: (p) => p.view,
      });
    },

    async get(db: Db, organisationId: string, key: string): Promise<RoleView> {
      if (isRoleName(key)) return builtInView(key);
      return customView(await foundOr404(rolesRepository.findByKey(db, organisationId, key), 'role.not_found', `No role ${key} in this organisation.`));
    },

    async create(db: Db, organisationId: string, input: Static<typeof CreateRole>): Promise<RoleView> {
      const taken = () => new ApiError('role.key_taken', `A role with key ${input.key} exists already.`);
      if (isRoleName(input.key)) throw taken();
      const at = nowIso(clock);
      const row: CustomRoleRow = { id: newId(), organisation_id: organisationId, key: input.key, name: input.name, capabilities: JSON.stringify(input.capabilities), created_at: at, updated_at: at };
      // A deferred write (db/deferred-writes.ts): its only unique key (but its id) is the organisation's key, so
      // its failure is the 409, without reading first.
      await rolesRepository.insert(db, row, (err) => (isUniqueViolation(err) ? taken() : err));
      await events.record(db, organisationId, 'role.created', { id: row.id, key: row.key, summary: `Role ${JSON.stringify(row.name)} created.` });
      return customView(row);
    },

    async update(db: Db, organisationId: string, key: string, patch: Static<typeof UpdateRole>): Promise<RoleView> {
      // One round trip (PostgreSQL, db/final-statement.ts): the change, its event and the epoch's bump go with the
      // COMMIT; a role not changed (built in, absent, already so) refuses it, so that the request runs again down here.
      if (finalStatementOffered() && !isRoleName(key) && (patch.name !== undefined || patch.capabilities !== undefined)) {
        return customView(await rolesRepository.updateInOneStatement(db, organisationId, key, patch, nowIso(clock)));
      }
      const row = await custom(db, organisationId, key);
      const changes: Partial<CustomRoleRow> = {};
      if (patch.name !== undefined && patch.name !== row.name) changes.name = patch.name;
      if (patch.capabilities !== undefined && JSON.stringify([...patch.capabilities].sort()) !== JSON.stringify((JSON.parse(row.capabilities) as string[]).sort())) {
        changes.capabilities = JSON.stringify(patch.capabilities);
      }
      if (Object.keys(changes).length === 0) return customView(row);
      const updated = { ...row, ...changes, updated_at: nowIso(clock) };
      await rolesRepository.update(db, organisationId, key, { ...changes, updated_at: updated.updated_at });
      // What the role allows is part of every holder's cached credentials.
      if (changes.capabilities !== undefined) await bumpCredentialEpoch(db, organisationId);
      await events.record(db, organisationId, 'role.updated', { id: row.id, key, summary: `Role ${JSON.stringify(updated.name)} changed (${Object.keys(changes).join(', ')}).` });
      return customView(updated);
    },

    async remove(db: Db, organisationId: string, key: string): Promise<void> {
      // One round trip, as update; a role built in, absent or still held refuses it (409, 404, 409 down here).
      if (finalStatementOffered() && !isRoleName(key)) return rolesRepository.deleteInOneStatement(db, organisationId, key, nowIso(clock));
      if (isRoleName(key)) throw builtIn(key);
      const row = await foundOr404(rolesRepository.findByKeyNotingHolders(db, organisationId, key), 'role.not_found', `No role ${key} in this organisation.`);
      // SQLite answers the exists() as 0 or 1.
      if (Boolean(row.held)) throw new ApiError('role.in_use', `Someone holds the role ${key}; take it from them first (GET /users?role=${key}).`);
      await rolesRepository.delete(db, organisationId, key);
      await events.record(db, organisationId, 'role.deleted', { id: row.id, key, summary: `Role ${JSON.stringify(row.name)} deleted.` });
    },
  };
}

export type RoleService = ReturnType<typeof createRoleService>;
