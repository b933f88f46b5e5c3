// First start on an empty database: create the development organisation at `localhost` with an
// administrator, and hand out that person's credentials once (docs/operating.md#running-it).
import { generatePassword } from './crypto/passwords.ts';
import { scopes } from './access/capabilities.ts';
import type { Services } from './services.ts';

export interface BootstrapResult {
  organisation: { id: string; address: string };
  email: string;
  password: string;
  apiKey: string;
}

export async function bootstrapIfEmpty(services: Services): Promise<BootstrapResult | undefined> {
  if (!(await services.organisations.isEmpty())) return undefined;
  const org = await services.organisations.create({ address: 'localhost', name: 'Development organisation' });
  const email = 'admin@localhost';
  const password = generatePassword();
  const person = await services.people.create({ organisationId: org.id, email, name: 'Administrator', roles: ['admin'], isPlatformAdmin: true, password });
  const { key } = await services.apiKeys.create({ organisationId: org.id, personId: person.id, name: 'development', scopes: [...scopes], mode: 'test' });
  return { organisation: { id: org.id, address: org.address }, email, password, apiKey: key };
}

export function describeBootstrap(b: BootstrapResult, baseUrl: string): string {
  return [
    '',
    'Created the development organisation (shown once; store these now):',
    `  address:       ${b.organisation.address}`,
    `  administrator: ${b.email}`,
    `  password:      ${b.password}`,
    `  API key:       ${b.apiKey}   (test mode, every scope)`,
    `  try:           curl -H "Authorization: Bearer ${b.apiKey}" ${baseUrl}/api/v1/me`,
    '',
  ].join('\n');
}
