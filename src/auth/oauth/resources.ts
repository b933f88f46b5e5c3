// The resources (RFC 8707) an organisation's tokens can be for, apart from authorization-server.ts so that
// /mcp's protected-resource document names them without loading oidc-provider.

/** The resources an organisation's tokens can be for (RFC 8707). */
export function resourcesOf(origin: string) {
  return { api: `${origin}/api/v1`, mcp: `${origin}/mcp` };
}
