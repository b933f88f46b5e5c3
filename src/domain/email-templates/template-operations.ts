// The writes to a template (save the draft, publish it, restore a version as the draft) are declared alike at the
// organisation and the platform level: each answers with the level's version, 404 for an unknown message, 409 for
// a state that refuses it, 422 for bad parameters. A level says who may write and how its versions look.
import type { TSchema } from 'typebox';
import type { Capability } from '../../access/capabilities.ts';
import type { ErrorCode } from '../../errors/error-catalog.ts';
import type { EventType } from '../../events/catalog.ts';
import { defineOperation, type Operation, type OperationContext, type OperationInput } from '../../operations/operation.ts';

export interface TemplateLevelDeclarations {
  tag: string;
  capability: Capability;
  /** The level's version: what every write answers with. */
  version: TSchema;
}

interface TemplateWrite<P extends TSchema, Q extends TSchema | undefined, B extends TSchema | undefined> {
  id: string;
  errorCodes: ErrorCode[];
  emits: EventType[];
  method: 'PUT' | 'POST';
  path: string;
  summary: string;
  description: string;
  idempotency: 'required' | 'optional';
  params: P;
  query?: Q;
  body?: B;
  bodyExample?: unknown;
  /** The version's when the path names one; the message's otherwise. */
  notFoundCode?: ErrorCode;
  success: { status: 200 | 201; alsoStatuses?: number[]; description: string };
  handler(ctx: OperationContext, input: OperationInput<P, Q, B>): Promise<unknown>;
}

export function templateWriteOperation<P extends TSchema, Q extends TSchema | undefined = undefined, B extends TSchema | undefined = undefined>(
  level: TemplateLevelDeclarations,
  write: TemplateWrite<P, Q, B>,
): Operation {
  const { success, notFoundCode = 'email_template.message_not_found', ...rest } = write;
  return defineOperation<P, Q, B>({
    ...rest,
    tag: level.tag,
    scope: 'email:write',
    capability: level.capability,
    writes: true,
    notFoundCode,
    success: { status: success.status, ...(success.alsoStatuses ? { alsoStatuses: success.alsoStatuses } : {}), schema: level.version, description: success.description },
    errors: [404, 409, 422],
  });
}
