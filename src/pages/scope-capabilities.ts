// What a scope would let an application do as the person consenting to it, in the catalogue's sentences: the
// capabilities the operations under that scope need (each operation declares its scope and capability, so this
// follows the registry with no list of its own), kept to those the person holds. A token never does more than
// its person may, so a capability the person lacks is no part of what they grant.
import { operations } from '../all-operations.ts';
import { capabilityDescriptions, organisationCapabilities, platformCapabilities, type Capability, type Scope } from '../access/capabilities.ts';

// Capabilities a service checks beyond its operation's own: giving or taking roles (`roles` in a user's create
// or PATCH) needs `roles:write` and `role/assign` (users.service.ts).
const checkedInServices: Partial<Record<Scope, readonly Capability[]>> = { 'roles:write': ['role/assign'] };

const catalogueOrder: readonly Capability[] = [...organisationCapabilities, ...platformCapabilities];

const exercisedBy = new Map<Scope, readonly Capability[]>();
{
  const found = new Map<Scope, Set<Capability>>();
  const add = (scope: Scope, capability: Capability) => (found.get(scope) ?? found.set(scope, new Set()).get(scope)!).add(capability);
  for (const op of operations) if (op.scope !== null && op.capability !== null) add(op.scope, op.capability);
  for (const [scope, capabilities] of Object.entries(checkedInServices) as Array<[Scope, readonly Capability[]]>) for (const c of capabilities) add(scope, c);
  for (const [scope, capabilities] of found) exercisedBy.set(scope, catalogueOrder.filter((c) => capabilities.has(c)));
}

export interface Allowance {
  capability: Capability;
  sentence: string;
}

/** What `scope` lets a credential of this person do: the capabilities it exercises that they hold, in catalogue order. */
export function allowancesUnder(scope: Scope, held: ReadonlySet<Capability>): Allowance[] {
  return (exercisedBy.get(scope) ?? []).filter((c) => held.has(c)).map((capability) => ({ capability, sentence: capabilityDescriptions[capability] }));
}
