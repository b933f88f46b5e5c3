// The MCP tools (docs/mcp.md#tools), made from the operation registry and nothing else: one tool per operation,
// named by its id in snake_case, described by its summary, taking one object that merges the operation's path,
// query and body fields, with the three annotations always explicit. Adding an operation adds its tool.
//
// Name clashes: an argument name must mean one thing. A field named in two of path, query and body, or a field
// named like one of the tool's own arguments (`idempotency_key`, `confirmation_token`), stops the process at
// start-up with the operation and field named: the operation's author renames it, so no argument is ever
// ambiguous (test/mcp-tools.test.ts runs this over the whole registry).
import type { Tool as ToolListing } from '@modelcontextprotocol/server';
import type { TSchema } from 'typebox';
import type { Operation } from '../operations/operation.ts';
import type { McpSettings } from './mcp-settings.service.ts';

export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';
export const CONFIRMATION_ARGUMENT = 'confirmation_token';

export interface Tool {
  name: string;
  op: Operation;
  /** The tool as `tools/list` shows it. */
  listing: ToolListing;
  /** Where each argument goes in the REST request. */
  pathFields: ReadonlySet<string>;
  queryFields: ReadonlySet<string>;
  bodyFields: ReadonlySet<string>;
}

/** `updateSection` → `update_section`. */
export function toolName(operationId: string): string {
  return operationId.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

interface ObjectSchema {
  properties?: Record<string, unknown>;
  required?: string[];
}

/** The schema as plain JSON Schema (TypeBox keeps its own markers on non-enumerable or `~` keys). */
function plain(schema: TSchema | undefined): ObjectSchema {
  return schema ? (JSON.parse(JSON.stringify(schema)) as ObjectSchema) : {};
}

/** MCP's idempotentHint: calling again with the same arguments has no further effect. Reads trivially. */
function idempotent(op: Operation): boolean {
  return op.method !== 'POST';
}

function listingOf(op: Operation, parts: Array<[string, ObjectSchema]>): ToolListing {
  const properties: Record<string, object> = {};
  const required: string[] = [];
  const seen = new Map<string, string>();
  for (const [where, schema] of parts) {
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      const earlier = seen.get(name);
      if (earlier) throw new Error(`MCP tool ${toolName(op.id)}: field \`${name}\` is both a ${earlier} and a ${where} field of operation ${op.id}; rename one`);
      if (name === IDEMPOTENCY_ARGUMENT || name === CONFIRMATION_ARGUMENT) throw new Error(`MCP tool ${toolName(op.id)}: the ${where} field \`${name}\` of operation ${op.id} is a name the tool keeps for itself; rename it`);
      seen.set(name, where);
      properties[name] = property as object;
    }
    // A path field is always needed; query and body fields as their schema says.
    if (where === 'path') required.push(...Object.keys(schema.properties ?? {}));
    else required.push(...(schema.required ?? []));
  }
  if (op.idempotency) {
    properties[IDEMPOTENCY_ARGUMENT] = {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description:
        (op.idempotency === 'required' ? 'Required by this tool. ' : '') +
        'A unique string for this intended change (a UUID, say). Sending the same key and arguments again replays the first answer instead of doing it twice; the same key with other arguments is refused (409).',
    };
  }
  if (op.destructive) {
    properties[CONFIRMATION_ARGUMENT] = {
      type: 'string',
      description: 'Leave out at first: the call then does nothing and answers with a confirmation_token. After the person agreed, call again with the same arguments and that token (one use, 5 minutes).',
    };
  }
  return {
    name: toolName(op.id),
    title: op.summary,
    description: op.summary,
    inputSchema: { type: 'object', properties: properties as ToolListing['inputSchema']['properties'], ...(required.length > 0 ? { required } : {}), additionalProperties: false },
    annotations: { readOnlyHint: !op.writes, destructiveHint: op.destructive === true, idempotentHint: idempotent(op) },
  };
}

export function buildTools(operations: readonly Operation[]): Tool[] {
  const tools = operations.map((op): Tool => {
    const path = plain(op.params);
    const query = plain(op.query);
    const body = plain(op.body);
    return {
      name: toolName(op.id),
      op,
      listing: listingOf(op, [['path', path], ['query', query], ['body', body]]),
      pathFields: new Set(Object.keys(path.properties ?? {})),
      queryFields: new Set(Object.keys(query.properties ?? {})),
      bodyFields: new Set(Object.keys(body.properties ?? {})),
    };
  });
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`two operations make the MCP tool ${tool.name}`);
    names.add(tool.name);
  }
  return tools;
}

/** Defaults (docs/mcp.md#the-administrators-page): every tool on except the destructive ones. */
export function onByDefault(tool: Tool): boolean {
  return tool.op.destructive !== true;
}

/** Whether the organisation's MCP server offers the tool: as its administrator decided, else by default. */
export function isToolOn(tool: Tool, settings: McpSettings): boolean {
  const decided = settings.toolsOn !== undefined && (settings.toolsKnown === undefined || settings.toolsKnown.has(tool.name));
  return decided ? settings.toolsOn!.has(tool.name) : onByDefault(tool);
}
