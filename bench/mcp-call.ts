// The MCP request the benches send (revision 2026-07-28, stateless): the per-request envelope, the headers a
// 2026-07-28 client sends with it, and `tools/call get_section`, in one place for every script that sends it.

/** The `_meta` envelope a 2026-07-28 request carries. */
const MCP_ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The headers of a 2026-07-28 request for `method` (and the tool, for `tools/call`). */
export function mcpHeaders(method: string, name?: string): Record<string, string> {
  return {
    'content-type': 'application/json',
    accept: 'application/json, text/event-stream',
    'mcp-protocol-version': '2026-07-28',
    'mcp-method': method,
    ...(name !== undefined ? { 'mcp-name': name } : {}),
  };
}

/** The JSON-RPC message of `method` with `params` and the envelope. */
export function mcpMessage(method: string, params: Record<string, unknown> = {}) {
  return { jsonrpc: '2.0', id: 1, method, params: { ...params, _meta: MCP_ENVELOPE } };
}

/** `tools/call get_section` of the section `id`. */
export const getSectionMessage = (id: string) => mcpMessage('tools/call', { name: 'get_section', arguments: { id } });

export const GET_SECTION_HEADERS = mcpHeaders('tools/call', 'get_section');
