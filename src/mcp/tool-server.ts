// The MCP server one request meets (docs/mcp.md): a low-level SDK `Server`, made afresh for every HTTP request
// (nothing survives between requests, so any request may land on any process), answering tools/list and
// tools/call for the caller that /mcp authenticated. Tools carry the operations' own JSON Schemas (tools.ts);
// a call runs its operation's pipeline in process, as its REST request would (tool-call.ts). Destructive tools ask for confirmation first:
// a 2026-07-28 client that declares elicitation gets an input_required result asking the person; any other
// client gets a confirmation request with a one-time `confirmation_token` (confirmations.ts).
import {
  CLIENT_CAPABILITIES_META_KEY,
  inputRequired,
  inputResponse,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type CallToolResult,
  type InputRequiredResult,
  type McpRequestContext,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { Actor } from '../access/actor.ts';
import { ApiError } from '../errors/api-error.ts';
import type { McpSettings } from './mcp-settings.service.ts';
import type { ConfirmationBinding, Confirmations } from './confirmations.ts';
import { problemResult as problemOf, type Caller, type ToolCaller } from './tool-call.ts';
import { restRequestFor, type RestRequest } from './tool-arguments.ts';
import { CONFIRMATION_ARGUMENT, isToolOn, type Tool } from './tools.ts';
import type { CallRegistry } from './call-registry.ts';
import type { MaybeAsync } from '../maybe-async.ts';

/** Who is calling, as /mcp established it, and over which request; named to the per-request server by its number in `calls` (call-registry.ts). */
export interface McpCall extends Caller {
  settings: McpSettings;
  /** The SDK servers made for the request so far (serverFor adds each): closed if its client goes away first (web-exchange.ts). */
  servers: Server[];
}

export interface ToolServerDeps {
  tools: readonly Tool[];
  confirmations: Confirmations;
  /** The door into the operation pipeline (tool-call.ts). */
  callOperation: ToolCaller;
  errorsUrl: string;
  version: string;
  /** The calls under way, which the SDK's authInfo names by number. */
  calls: CallRegistry<McpCall>;
}

const INSTRUCTIONS =
  'Atrium is a learning platform. Each tool is one operation of its REST API and acts as the signed-in person, within the scopes they granted. ' +
  'Results are the JSON the API answers; a failure is a problem document (decide on its `code`). ' +
  'Destructive tools ask for the person’s confirmation before doing anything.';

const CONFIRM_SCHEMA = {
  type: 'object' as const,
  properties: { confirm: { type: 'boolean' as const, title: 'Yes, go ahead' } },
  required: ['confirm'],
};

const inScope = (tool: Tool, actor: Actor) => tool.op.scope === null || actor.scopes.has(tool.op.scope);
const mayRun = (tool: Tool, actor: Actor) => inScope(tool, actor) && (tool.op.capability === null || actor.capabilities.has(tool.op.capability));

/** One sentence naming what a destructive call would do. */
function effectOf(tool: Tool, rest: RestRequest): string {
  const summary = tool.op.summary.charAt(0).toLowerCase() + tool.op.summary.slice(1);
  return `This will ${summary}: ${rest.method} ${rest.url}.`;
}

/** Whether the request's envelope (2026-07-28) declares form elicitation (`elicitation: {}` counts as form). */
function declaresElicitation(ctx: ServerContext): boolean {
  const capabilities = ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY as never] as { elicitation?: { form?: unknown; url?: unknown } } | undefined;
  const elicitation = capabilities?.elicitation;
  return elicitation !== undefined && elicitation !== null && (elicitation.form !== undefined || elicitation.url === undefined);
}

/**
 * The SDK's low-level `Server`, closed without a stack trace. The SDK closes every per-request server when its
 * exchange ends, and its close (`Protocol._onclose`) makes a "Connection closed" `SdkError` for whatever still
 * waits on the exchange: nothing, once the answer is made. Making it captured the stack, the await chain behind
 * it included: 11-16 µs of a tool call's CPU (about 5 % of it), the largest single function in its V8 profile
 * (bench/README.md). Its message says all there is; a handler still running when a client goes away is
 * aborted with it as before, without the stack.
 */
export class ToolServer extends Server {
  protected override _onclose(): void {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super._onclose();
    } finally {
      Error.stackTraceLimit = limit;
    }
  }
}

export function createToolServerFactory(deps: ToolServerDeps) {
  const byName = new Map(deps.tools.map((t) => [t.name, t]));

  const problemResult = (call: McpCall, err: ApiError): CallToolResult => problemOf(call.requestId, err, deps.errorsUrl);

  const invalidConfirmation = (call: McpCall) =>
    problemResult(call, new ApiError('mcp.confirmation_invalid', 'The confirmation is wrong, used, expired or was given for another call; nothing was done. Call the tool again without it to get a new one.'));

  /** The elicitation round trip: 'run' once the person accepted this very call; otherwise what to answer. */
  async function elicit(call: McpCall, ctx: ServerContext, binding: ConfirmationBinding, effect: string): Promise<'run' | CallToolResult | InputRequiredResult> {
    const state = ctx.mcpReq.requestState();
    const answer = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
    if (typeof state === 'string' && answer.kind === 'elicit') {
      if (answer.action !== 'accept' || answer.content?.confirm !== true) {
        return { content: [{ type: 'text', text: `Nothing was done: the person did not confirm (${answer.action}).` }], structuredContent: { confirmed: false, action: answer.action } };
      }
      return (await deps.confirmations.redeem('elicitation', state, binding)) ? 'run' : invalidConfirmation(call);
    }
    const { value } = deps.confirmations.issue('elicitation', binding);
    return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: `${effect} Go ahead?`, requestedSchema: CONFIRM_SCHEMA }) }, requestState: value });
  }

  /** The call, at once where its operation answers at once (tool-call.ts); a destructive one once confirmed. */
  function callTool(call: McpCall, era: McpRequestContext['era'], name: string, given: Record<string, unknown>, ctx: ServerContext): MaybeAsync<CallToolResult | InputRequiredResult> {
    const tool = byName.get(name);
    // A tool switched off is no tool at all here (MCP: unknown tool → invalid params).
    if (!tool || !isToolOn(tool, call.settings)) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const { [CONFIRMATION_ARGUMENT]: confirmation, ...args } = given;
    let rest: RestRequest;
    try {
      rest = restRequestFor(tool, tool.op.destructive ? args : given);
    } catch (err) {
      if (err instanceof ApiError) return problemResult(call, err);
      throw err;
    }
    // A call the pipeline would refuse anyway (scope, capability) is not worth a person's confirmation.
    if (tool.op.destructive && mayRun(tool, call.actor)) return confirmThenCall(call, era, tool, rest, args, confirmation, ctx);
    return deps.callOperation(call, tool, rest);
  }

  /** A destructive call: run once the person confirmed it (a redeemed token, or an accepted elicitation); else what to answer. */
  async function confirmThenCall(
    call: McpCall,
    era: McpRequestContext['era'],
    tool: Tool,
    rest: RestRequest,
    args: Record<string, unknown>,
    confirmation: unknown,
    ctx: ServerContext,
  ): Promise<CallToolResult | InputRequiredResult> {
    const binding: ConfirmationBinding = { organisationId: call.organisation.id, personId: call.actor.personId, tool: tool.name, arguments: args };
    const effect = effectOf(tool, rest);
    if (confirmation !== undefined) {
      if (!(await deps.confirmations.redeem('token', confirmation, binding))) return invalidConfirmation(call);
    } else if (era === 'modern' && declaresElicitation(ctx)) {
      const outcome = await elicit(call, ctx, binding, effect);
      if (outcome !== 'run') return outcome;
    } else {
      const { value, expiresAt } = deps.confirmations.issue('token', binding);
      return {
        isError: false,
        content: [{ type: 'text', text: `Nothing was done yet. ${effect} Ask the person; if they agree, call ${tool.name} again with the same arguments and "${CONFIRMATION_ARGUMENT}": "${value}" (valid once, until ${expiresAt}).` }],
        structuredContent: { confirmation_required: true, confirmation_token: value, expires_at: expiresAt, effect },
      };
    }
    return deps.callOperation(call, tool, rest);
  }

  return function serverFor(ctx: McpRequestContext): Server {
    // Looked up when a handler runs: the server and its handlers keep the number, never the call.
    const key = ctx.authInfo?.extra?.call;
    const server = new ToolServer({ name: 'atrium', title: 'Atrium', version: deps.version }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
    if (key !== undefined) deps.calls.get(key).servers.push(server);
    server.setRequestHandler('tools/list', async () => {
      const call = deps.calls.get(key);
      return { tools: deps.tools.filter((t) => isToolOn(t, call.settings) && inScope(t, call.actor)).map((t) => t.listing) };
    });
    server.setRequestHandler('tools/call', (request, handlerCtx) => callTool(deps.calls.get(key), ctx.era, request.params.name, (request.params.arguments ?? {}) as Record<string, unknown>, handlerCtx));
    return server;
  };
}
