// The prefix of the per-call handle an MCP tool call hands to the REST pipeline it dispatches to (src/mcp/dispatch-credential.ts):
// kept here, below both, so that the pipeline can tell a dispatched call (audit `via: mcp`) without importing the MCP server.
export const DISPATCH_TOKEN_PREFIX = 'atr_mcp_';
