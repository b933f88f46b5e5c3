// Capabilities (what a person may do, `area/verb`), the built-in roles that grant them, and the credential
// scopes (`<resource>:read|write|delete`) that limit what a token may do on that person's behalf.
// spec: Authentication 4 and 6 — a scope never lets a token do more than the person could.

export const organisationCapabilities = [
  'course/view',
  'course/create',
  'course/update',
  'course/delete',
  'category/manage',
  'email_template/edit',
  'email/campaign_manage',
  'wiki/edit',
  'wiki/revert',
  'lesson/manage_pages',
  'file/upload',
  'file/view',
  'tenant/configure',
  'webhook/manage',
  'enrol/configure_method',
  'enrol/view',
  'enrol/manage',
  'person/view',
  'api_key/manage',
  'oauth_client/manage',
] as const;

export const platformCapabilities = ['platform/email_templates_edit', 'platform/organisations_manage'] as const;

export type Capability = (typeof organisationCapabilities)[number] | (typeof platformCapabilities)[number];

const integrationAdministration = new Set<Capability>(['tenant/configure', 'webhook/manage', 'api_key/manage', 'oauth_client/manage']);

export const roles = {
  admin: [...organisationCapabilities],
  manager: organisationCapabilities.filter((c) => !integrationAdministration.has(c)),
  teacher: ['course/view', 'course/update', 'wiki/edit', 'wiki/revert', 'lesson/manage_pages', 'file/upload', 'file/view', 'enrol/configure_method', 'enrol/view', 'enrol/manage'],
  integration: [
    'course/view',
    'course/create',
    'course/update',
    'wiki/edit',
    'lesson/manage_pages',
    'email/campaign_manage',
    'file/upload',
    'file/view',
    'enrol/configure_method',
    'enrol/view',
    'enrol/manage',
    'person/view',
  ],
} as const satisfies Record<string, readonly Capability[]>;

export type RoleName = keyof typeof roles;
export const roleNames = Object.keys(roles) as RoleName[];
export const isRoleName = (name: string): name is RoleName => Object.hasOwn(roles, name);

export function capabilitiesOf(personRoles: readonly string[], isPlatformAdmin: boolean): Set<Capability> {
  const caps = new Set<Capability>();
  for (const role of personRoles) if (isRoleName(role)) for (const c of roles[role]) caps.add(c);
  if (isPlatformAdmin) for (const c of platformCapabilities) caps.add(c);
  return caps;
}

export const scopeResources = [
  'courses',
  'enrolments',
  'email',
  'files',
  'webhooks',
  'users',
  'roles',
  'tenants',
  'audit',
] as const;

export const scopes = scopeResources.flatMap((r) => [`${r}:read`, `${r}:write`, `${r}:delete`] as const);
export type Scope = `${(typeof scopeResources)[number]}:${'read' | 'write' | 'delete'}`;
const scopeSet = new Set<string>(scopes);
export const isScope = (s: string): s is Scope => scopeSet.has(s);

// spec: Authentication 5 — these carry a warning on the consent screen.
export const privilegedScopes: readonly Scope[] = ['audit:read', 'roles:write', 'tenants:write', 'users:delete'];
