// The organisations' authorization servers, each made on first use and kept (least recently used first out),
// so that an operator with thousands of organisations pays for those in use, not for all of them at start.
// oidc-provider itself is loaded with the first server made: a process that serves no OAuth request never
// loads it (docs/operating.md#memory).
import type Provider from 'oidc-provider';
import type { Organisation } from '../../domain/organisations/organisations.repository.ts';
import { publicOrigin } from '../../public-origin.ts';
import type { AuthorizationServerDeps } from './authorization-server.ts';

const KEPT = 1000;

export function createAuthorizationServers(deps: AuthorizationServerDeps) {
  const servers = new Map<string, { issuer: string; provider: Provider }>();
  return {
    async forOrganisation(org: Organisation): Promise<Provider> {
      // Loaded once; from then on this resolves at once, and nothing below waits, so two requests never make two servers.
      const { createAuthorizationServer } = await import('./authorization-server.ts');
      const issuer = publicOrigin(deps.publicOrigin, org.address);
      const kept = servers.get(org.id);
      servers.delete(org.id);
      // An address (or the public origin) changed: the issuer changed, so does the server.
      const entry = kept && kept.issuer === issuer ? kept : { issuer, provider: createAuthorizationServer(org, deps) };
      servers.set(org.id, entry);
      if (servers.size > KEPT) servers.delete(servers.keys().next().value!);
      return entry.provider;
    },
  };
}

export type AuthorizationServers = ReturnType<typeof createAuthorizationServers>;
