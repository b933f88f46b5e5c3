// The admin area's pages, in menu order, with the capability each needs (docs/authentication.md#signing-in-and-the-admin-area). The
// menu and the /admin index show a person only the pages they may open.
import type { Capability } from '../access/capabilities.ts';

export interface AdminPage {
  href: string;
  label: string;
  description: string;
  capability: Capability;
}

export const adminPages: readonly AdminPage[] = [
  { href: '/admin/people', label: 'People', description: 'Everyone in the organisation: invite people, give them roles, suspend or remove them.', capability: 'person/view' },
  { href: '/admin/integrations/api-keys', label: 'API keys', description: 'Keys that let an integration call the REST API as you, limited to the scopes you choose.', capability: 'api_key/manage' },
  { href: '/admin/integrations/oauth-clients', label: 'OAuth clients', description: 'Applications that act for a signed-in person (authorization code) or as a service person (client credentials).', capability: 'oauth_client/manage' },
  { href: '/admin/integrations/mcp', label: 'MCP server', description: 'Whether AI assistants may connect, the tools they are offered, and whether they may register themselves.', capability: 'tenant/configure' },
  { href: '/admin/webhooks', label: 'Webhooks', description: 'Endpoints that receive signed events, with their delivery log.', capability: 'webhook/manage' },
  { href: '/admin/extensions', label: 'Extensions', description: 'Switch compiled-in activity types, enrolment methods and other extensions on or off.', capability: 'tenant/configure' },
  { href: '/admin/audit', label: 'Audit log', description: 'Who changed what, with which credential and from where: every change, and every change refused for lack of permission.', capability: 'audit/view' },
];

export function pagesFor(capabilities: ReadonlySet<Capability>): AdminPage[] {
  return adminPages.filter((p) => capabilities.has(p.capability));
}

export function navigationFor(capabilities: ReadonlySet<Capability>, currentPath: string) {
  return [{ href: '/admin', label: 'Overview', description: '' }, ...pagesFor(capabilities)].map((p) => ({
    href: p.href,
    label: p.label,
    current: p.href === '/admin' ? currentPath === '/admin' : currentPath === p.href || currentPath.startsWith(`${p.href}/`),
  }));
}
