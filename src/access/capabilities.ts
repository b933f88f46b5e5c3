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
  'person/manage',
  'person/delete',
  'role/assign',
  'role/manage',
  'audit/view',
  'api_key/manage',
  'oauth_client/manage',
] as const;

export const platformCapabilities = ['platform/email_templates_edit', 'platform/organisations_manage'] as const;

export type Capability = (typeof organisationCapabilities)[number] | (typeof platformCapabilities)[number];

// What only an administrator holds by default: the integrations, what roles allow, and the audit log.
const administration = new Set<Capability>(['tenant/configure', 'webhook/manage', 'api_key/manage', 'oauth_client/manage', 'role/manage', 'audit/view']);

export const roles = {
  admin: [...organisationCapabilities],
  manager: organisationCapabilities.filter((c) => !administration.has(c)),
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

/** What each capability allows, in one sentence (`GET /capabilities`, the consent and admin pages). */
export const capabilityDescriptions: { readonly [C in Capability]: string } = {
  'course/view': 'See courses, their sections and activities, including hidden ones.',
  'course/create': 'Create courses and course categories.',
  'course/update': 'Change courses, their sections and activities.',
  'course/delete': 'Delete courses.',
  'category/manage': 'Create, rename, move and delete course categories.',
  'email_template/edit': 'Edit and publish the organisation’s email templates.',
  'email/campaign_manage': 'Write, schedule and send email messages to people and course participants.',
  'wiki/edit': 'Create and edit wiki pages.',
  'wiki/revert': 'Restore an earlier version of a wiki page.',
  'lesson/manage_pages': 'Add, change, reorder and delete the pages of lessons.',
  'file/upload': 'Store files.',
  'file/view': 'Read stored files.',
  'tenant/configure': 'Change the organisation’s settings, its extensions and its MCP server.',
  'webhook/manage': 'Add, change and remove webhook endpoints and read their delivery logs.',
  'enrol/configure_method': 'Add and configure the enrolment methods of courses.',
  'enrol/view': 'See who is enrolled in which course, with which role and dates.',
  'enrol/manage': 'Enrol people in courses, change their enrolments and end them.',
  'person/view': 'See the organisation’s people, their roles and status, and the roles there are.',
  'person/manage': 'Add, invite, rename, suspend and reactivate people.',
  'person/delete': 'Remove people from the organisation; their sign-in, keys and tokens stop working.',
  'role/assign': 'Give people roles and take roles away, never one that allows more than you may do.',
  'role/manage': 'Create, change and delete custom roles and choose what each allows.',
  'audit/view': 'Read the audit log: who changed what, when, with which credential.',
  'api_key/manage': 'Create and revoke API keys that act as you.',
  'oauth_client/manage': 'Register, rotate and delete OAuth clients.',
  'platform/email_templates_edit': 'Edit the platform’s email templates, which every organisation inherits.',
  'platform/organisations_manage': 'Create and configure organisations of the platform.',
};

const organisationCapabilitySet = new Set<string>(organisationCapabilities);
/** What a custom role may hold: an organisation's capabilities, never the platform's. */
export const isOrganisationCapability = (name: string): name is (typeof organisationCapabilities)[number] => organisationCapabilitySet.has(name);

/**
 * A person's capabilities: those of their built-in roles, of their custom roles (`customRoles`, key → the
 * capabilities it holds, read from the organisation's roles), and the platform's for a platform administrator.
 */
export function capabilitiesOf(personRoles: readonly string[], isPlatformAdmin: boolean, customRoles?: ReadonlyMap<string, readonly string[]>): Set<Capability> {
  const caps = new Set<Capability>();
  for (const role of personRoles) {
    if (isRoleName(role)) for (const c of roles[role]) caps.add(c);
    else for (const c of customRoles?.get(role) ?? []) if (isOrganisationCapability(c)) caps.add(c);
  }
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
