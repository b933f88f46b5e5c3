// "One operation, defined once" (ARCHITECTURE.md): each API operation is a value of this type. The route,
// its shared hooks, the OpenAPI entry, the MCP tool and the security suite's row all come from it.
import type { Static, TSchema } from 'typebox';
import type { Actor } from '../access/actor.ts';
import type { Capability, Scope } from '../access/capabilities.ts';
import type { Db } from '../db/database.ts';
import type { OrganisationsTable } from '../db/tables.ts';
import type { ErrorCode } from '../errors/error-catalog.ts';
import type { EventType } from '../events/catalog.ts';
import type { MaybeAsync } from '../maybe-async.ts';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The services a handler reaches through its context. The composition root (services.ts) fills this interface
 * in by declaration merging, so that the framework stands below the domain it serves rather than importing the
 * bundle that is built on top of it (the same way Fastify's own types are extended).
 */
export interface OperationServices {}

export interface OperationContext {
  organisation: OrganisationsTable;
  actor: Actor;
  /** For operations that write: the transaction the whole request commits in. Otherwise the database. */
  db: Db;
  services: OperationServices;
  /** The revision applied to this request (spec: Versioning). */
  revision: string;
  requestId: string;
  /**
   * The caller sent `Prefer: return=minimal` (RFC 7240) and the operation declares `minimal`: the handler
   * answers the shorter body that declaration describes.
   */
  returnMinimal?: boolean;
}

type Input<S> = S extends TSchema ? Static<S> : undefined;

export interface OperationInput<P, Q, B> {
  params: Input<P>;
  query: Input<Q>;
  body: Input<B>;
  /** What `prepare` returned, if the operation has one. */
  prepared?: unknown;
}

/**
 * A handler may answer with another success status than the declared one (an upsert's 200 vs 201), or with
 * headers of its own (a file's Content-Type).
 */
export class Outcome {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string> | undefined;
  constructor(status: number, body: unknown, headers?: Record<string, string>) {
    this.status = status;
    this.body = body;
    this.headers = headers;
  }
}

export interface Operation<P extends TSchema | undefined = any, Q extends TSchema | undefined = any, B extends TSchema | undefined = any> {
  /** OpenAPI operationId and MCP tool name. */
  id: string;
  method: HttpMethod;
  /** Path under /api/v1, OpenAPI style: `/sections/{id}`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** null only for operations every authenticated caller may use (GET /me). */
  scope: Scope | null;
  capability: Capability | null;
  /** Writes are refused on plans without the API entitlement and run in one transaction. */
  writes: boolean;
  destructive?: boolean;
  idempotency?: 'required' | 'optional';
  params?: P;
  query?: Q;
  body?: B;
  /** An example request body for the OpenAPI document. */
  bodyExample?: unknown;
  /** `binary`: the body is raw bytes (a file's content), not JSON. */
  success: { status: 200 | 201 | 204; schema?: TSchema; binary?: boolean; description: string; alsoStatuses?: number[] };
  /**
   * The operation honours `Prefer: return=minimal` (RFC 7240): its handler then answers a success in the shape
   * of `schema` (bulk results with only each record's id), the answer says `Preference-Applied: return=minimal`,
   * and the preference is part of the Idempotency-Key fingerprint. `description` tells callers what is left out.
   */
  minimal?: { schema: TSchema; description: string };
  /** The statuses the spec lists for this operation besides the shared 401, 403, 429, 500 (and 412 on writes). */
  errors: number[];
  /** The events a success writes (exactly one of them); none for reads and for a change that changes nothing. */
  emits?: EventType[];
  /** Code answered when a path id cannot exist (not a UUID): a plain 404, as for an unknown id. */
  notFoundCode?: ErrorCode;
  /**
   * The codes the service may answer with that the fields above do not imply: the conflicts of the resource's
   * states, a 404 for something else the request names. The rest is derived (`operation-errors.ts`);
   * the contract check fails a response whose code its operation does not list.
   */
  errorCodes?: ErrorCode[];
  /** A bulk endpoint: the collection and the ops it runs, whose refusals it reports inside its results. */
  bulk?: { collection: string; ops: readonly string[] };
  /**
   * Work a write must do before its transaction opens because it waits on the network (a webhook's
   * verification ping): holding the database meanwhile would stall every other writer. Not run for replays.
   */
  prepare?(ctx: OperationContext, input: OperationInput<P, Q, B>): Promise<unknown>;
  /**
   * Whether this request has work for `prepare` (without it: every request has). One that has none runs as a
   * plain write: with an Idempotency-Key, the key's record is looked for with its first statement rather than
   * in a round trip before the transaction (a PATCH of a webhook subscription that keeps its URL pings nothing).
   */
  prepares?(input: OperationInput<P, Q, B>): boolean;
  /** A read may answer at once when nothing it reads waits (src/maybe-async.ts); a write answers a promise. */
  handler(ctx: OperationContext, input: OperationInput<P, Q, B>): MaybeAsync<unknown>;
}

/** Identity function that gives the handler typed input from the declared schemas. */
export function defineOperation<P extends TSchema | undefined = undefined, Q extends TSchema | undefined = undefined, B extends TSchema | undefined = undefined>(
  op: Operation<P, Q, B>,
): Operation<P, Q, B> {
  return op;
}
