// What a person may do, from their role keys: built-in roles are known in code, custom roles are read from the
// organisation's `custom_roles` (only when the person holds one). Every authenticator calls this when it
// verifies a credential; what it returns is cached under the credentials epoch, which every role change bumps
// (src/auth/credential-epoch.ts), so a changed role applies from the next request on every process.
import type { Db } from '../../db/database.ts';
import { capabilitiesOf, isRoleName, type Capability } from '../../access/capabilities.ts';
import { rolesRepository } from './roles.repository.ts';

export async function customRoleCapabilities(db: Db, organisationId: string, keys: readonly string[]): Promise<Map<string, string[]>> {
  const custom = keys.filter((k) => !isRoleName(k));
  const rows = await rolesRepository.findByKeys(db, organisationId, custom);
  return new Map(rows.map((r) => [r.key, JSON.parse(r.capabilities) as string[]]));
}

/** `rolesJson` is the people row's `roles` column. */
export async function personCapabilities(db: Db, organisationId: string, rolesJson: string, isPlatformAdmin: boolean | number): Promise<Set<Capability>> {
  const keys = JSON.parse(rolesJson) as string[];
  const custom = keys.every(isRoleName) ? undefined : await customRoleCapabilities(db, organisationId, keys);
  return capabilitiesOf(keys, Boolean(isPlatformAdmin), custom);
}
