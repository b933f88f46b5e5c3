// The MCP door into the operation pipeline (docs/mcp.md#tools — "a call runs exactly like the REST request"): a
// tool call runs its operation's own pipeline in this process, inside the /mcp HTTP request that carries it, with
// no second HTTP request. /mcp has read the organisation (with its plan and credentials epoch, fresh) and
// authenticated the caller's credential for this very request (an API key, or an access token for
// `{origin}/mcp`), which are the pipeline's first two steps; the call enters after them and runs the same
// functions as a REST request from there on (http/pipeline.ts, http/operation-runner.ts): scope, capability,
// entitlement, the rate and concurrency limits (counted on the /mcp request), revision, Idempotency-Key, the
// body check, validation, the handler in its transaction with its events, idempotency record and audit entry
// (`via: mcp`, with the /mcp request's address and user agent), and the answer serialised through the success
// schema. The answer becomes the tool result: the JSON as structuredContent and as text; a refusal as an
// isError result carrying its problem document.
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { ApiError } from '../errors/api-error.ts';
import { problemBody } from '../errors/problems.ts';
import { checkJsonValue } from '../http/body-parser.ts';
import { problemFor } from '../http/error-handler.ts';
import type { OperationAnswer } from '../http/operation-runner.ts';
import type { Exchange, OperationCall } from '../http/pipeline.ts';
import type { OperationPipeline } from '../http/registry.ts';
import { StaleTenancy } from '../http/tenancy-cache.ts';
import { isDatabaseUnavailable } from '../db/availability.ts';
import type { Actor } from '../access/actor.ts';
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import type { RestRequest } from './tool-arguments.ts';
import type { Tool } from './tools.ts';
import { andThen, attempt, type MaybeAsync } from '../maybe-async.ts';

/** The caller /mcp established for one HTTP request, and that request. */
export interface Caller {
  organisation: Organisation;
  actor: Actor;
  requestId: string;
  exchange: Exchange;
  /**
   * For a caller established from a cached organisation (mcp-routes.ts): throws StaleTenancy unless that copy
   * still holds, checked before a refusal is answered, as the REST door does.
   */
  confirmTenancy?: () => Promise<void>;
}

export interface ToolCallDeps {
  pipeline: OperationPipeline;
  /** Tools describe the current revision's shapes, so they run at it, whatever the credential is pinned to. */
  revision: string;
  errorsUrl: string;
}

/** A refusal as a tool result: its problem document, with the status and request id in `_meta`. */
export function problemResult(requestId: string, err: ApiError, errorsUrl: string): CallToolResult {
  const problem = problemBody(err, requestId, errorsUrl);
  return { isError: true, content: [{ type: 'text', text: JSON.stringify(problem) }], structuredContent: problem, _meta: { 'atrium/status': err.status, 'atrium/request_id': requestId } };
}

/** The operation's answer as a tool result; `_meta` keeps what only headers would say (status, request id, replay). */
export function toolResult(requestId: string, answer: OperationAnswer): CallToolResult {
  const _meta = {
    'atrium/status': answer.status,
    'atrium/request_id': requestId,
    ...(answer.replayed ? { 'atrium/idempotency_replayed': true } : {}),
  };
  const { payload } = answer;
  if (payload === undefined || payload.length === 0) return { content: [{ type: 'text', text: `Done (HTTP ${answer.status}, no content).` }], _meta };
  const type = answer.json ? 'application/json' : (answer.headers?.['content-type'] ?? (typeof payload === 'string' ? 'text/plain; charset=utf-8' : 'application/octet-stream'));
  if (answer.json || /json/.test(type)) {
    const text = payload.toString();
    const value = JSON.parse(text) as unknown;
    const structured = value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : { value };
    return { content: [{ type: 'text', text }], structuredContent: structured, ...(answer.status >= 400 ? { isError: true } : {}), _meta };
  }
  // A file's bytes: as the upload tool takes them.
  const file = { content_type: type, content_base64: Buffer.from(payload).toString('base64') };
  return { content: [{ type: 'text', text: JSON.stringify(file) }], structuredContent: file, _meta };
}

export function createToolCaller(deps: ToolCallDeps) {
  const { pipeline, revision, errorsUrl } = deps;

  /** What a refused call answers: its problem document as a tool result, once recorded (see below). */
  async function refusalResult(caller: Caller, op: Tool['op'], call: OperationCall, err: unknown): Promise<CallToolResult> {
    // The organisation the call started from changed (it rode with the call's first statement): /mcp runs
    // the call again on the organisation as it is now, and this answer is never sent (mcp-routes.ts).
    if (err instanceof StaleTenancy) throw err;
    if (caller.confirmTenancy && !isDatabaseUnavailable(err)) await caller.confirmTenancy();
    const http = caller.exchange.request;
    const refusal = problemFor(err as Error, http);
    if (op.writes) await pipeline.runner.recordRefusal(op, call, err, refusal, http.log);
    return problemResult(caller.requestId, refusal, errorsUrl);
  }

  /**
   * The call's answer, at once where every step answers at once (a read on SQLite, as its REST request is:
   * src/maybe-async.ts), else once it comes; a refusal, from any step, as refusalResult makes it.
   */
  return function callOperation(caller: Caller, tool: Tool, rest: RestRequest): MaybeAsync<CallToolResult> {
    const op = tool.op;
    const http = caller.exchange.request;
    const userAgent = http.headers['user-agent'];
    const call: OperationCall = {
      id: caller.requestId,
      method: rest.method,
      url: rest.url,
      ip: http.ip,
      headers: {
        'service-version': revision,
        ...(rest.idempotencyKey !== undefined ? { 'idempotency-key': rest.idempotencyKey } : {}),
        ...(userAgent !== undefined ? { 'user-agent': userAgent } : {}),
      },
      params: rest.params,
      query: rest.query,
      body: rest.body,
      via: 'mcp',
      organisation: caller.organisation,
      actor: caller.actor,
    };
    const refused = (err: unknown) => refusalResult(caller, op, call, err);
    const result = (answer: OperationAnswer) => {
      try {
        return toolResult(caller.requestId, answer);
      } catch (err) {
        return refused(err);
      }
    };
    const admitThenRun = () =>
      andThen(pipeline.admission.admitCaller(call, op, caller.exchange), () => {
        // What the REST door's body parser checks of a body, after admission as there.
        if (call.body !== undefined) call.body = checkJsonValue(call.body);
        return pipeline.runs.get(op)!(call);
      });
    return attempt(admitThenRun, result, refused);
  };
}

export type ToolCaller = ReturnType<typeof createToolCaller>;
