// spec: What the service does 6 — API keys, OAuth clients, webhooks and the MCP server belong to the plan's API
// entitlement. Without it, creating keys, clients and subscriptions is refused (412 commerce.plan_entitlement)
// whichever way it is asked for: REST, admin page or CLI.
import type { Db } from '../../db/database.ts';
import { ApiError } from '../../errors/api-error.ts';
import { organisationsRepository } from './organisations.repository.ts';

export async function requireApiEntitlement(db: Db, organisationId: string, what: string): Promise<void> {
  const org = await organisationsRepository.findById(db, organisationId);
  if (org?.plan === 'no-api') throw new ApiError('commerce.plan_entitlement', `This organisation's plan does not include the API, so no new ${what} can be created; existing ones can still be listed and revoked.`);
}
