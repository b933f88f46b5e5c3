// What each scope lets a credential do, in words for the consent page and the API key form (spec:
// Authentication 4-5). The four privileged scopes carry a warning saying what they allow.
import { scopeResources, type Scope } from '../access/capabilities.ts';

const resourceWords: Record<(typeof scopeResources)[number], string> = {
  courses: 'courses, their sections, activities, wiki and lesson pages',
  enrolments: 'enrolment methods and who is enrolled',
  email: 'email templates and email messages to people',
  files: 'files and where new files are stored',
  webhooks: 'webhook endpoints and their delivery log',
  users: 'the people of the organisation',
  roles: 'roles and what they allow',
  tenants: "the organisation's own settings",
  audit: 'the audit log of who did what',
};

const actionWords = { read: 'Read', write: 'Create and change', delete: 'Delete' } as const;

/** The privileged scopes' warnings (spec: Authentication 5). */
export const privilegedWarnings: Partial<Record<Scope, string>> = {
  'audit:read': 'It can read everything anyone did in the organisation, including other people’s actions.',
  'roles:write': 'It can change what roles allow, and so what people (you included) may do.',
  'tenants:write': 'It can change the settings of the whole organisation.',
  'users:delete': 'It can delete people of the organisation.',
};

export function describeScope(scope: Scope): string {
  const [resource, action] = scope.split(':') as [(typeof scopeResources)[number], keyof typeof actionWords];
  return `${actionWords[action]} ${resourceWords[resource]}.`;
}
