// An organisation's public origin (docs/conventions.md#addresses-and-requests): `{PUBLIC_SCHEME}://{address}`, plus
// `:{PUBLIC_PORT}` when there is one. Every absolute URL the service prints is built from it: the OpenAPI
// `servers`, the OAuth issuer and its endpoints, the MCP resource, links in mails and pages.
export interface PublicOriginSettings {
  publicScheme: 'http' | 'https';
  /** Already defaulted by config.ts (PORT with http, none with https). */
  publicPort: number | undefined;
}

export function publicOrigin(settings: PublicOriginSettings, address: string): string {
  const defaultPort = settings.publicScheme === 'https' ? 443 : 80;
  const port = settings.publicPort === undefined || settings.publicPort === defaultPort ? '' : `:${settings.publicPort}`;
  return `${settings.publicScheme}://${address}${port}`;
}
