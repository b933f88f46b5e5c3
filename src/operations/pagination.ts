// Cursor paging shared by every list (spec: Conventions — Pagination; docs/conventions.md#lists). A cursor is opaque:
// it carries the position, the list, the organisation and a digest of the filters it was made for, signed
// with the deployment's key — so a forged, truncated or foreign cursor is a 422, never a silent wrong page.
import { createHmac } from 'node:crypto';
import { sameText } from '../crypto/same-text.ts';
import Type from 'typebox';
import { ApiError } from '../errors/api-error.ts';

export const DEFAULT_LIMIT = 50;
export const MAX_LIMIT = 200;

export const PageQuery = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: `Page size, 1 to ${MAX_LIMIT}; default ${DEFAULT_LIMIT}.` })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: 'The `page.next_cursor` of the previous page, unchanged.' })),
};

export const ListQuery = {
  ...PageQuery,
  include_deleted: Type.Optional(Type.Boolean({ default: false, description: 'Include soft-deleted rows (with `deleted_at` set).' })),
  updated_since: Type.Optional(
    Type.String({ format: 'date-time', description: 'Only rows changed after this RFC 3339 time, in order of change (`updated_at`, then `id`).' }),
  ),
};

export interface Page<T> {
  data: T[];
  page: { next_cursor: string | null; has_more: boolean; limit: number };
}

interface CursorPayload {
  /** list name */
  l: string;
  /** organisation */
  o: string;
  /** digest of the filters */
  f: string;
  /** position: the sort key values of the last row returned */
  k: string[];
}

const SIGNATURE_BYTES = 16;

const invalidCursor = () =>
  new ApiError('validation.invalid_parameter', 'Query parameter `cursor` is not a cursor of this list with these filters; pass `page.next_cursor` unchanged.');

export function createCursorCodec(signingKey: string) {
  const sign = (data: string) => createHmac('sha256', signingKey).update(data).digest().subarray(0, SIGNATURE_BYTES);
  return {
    encode(payload: CursorPayload): string {
      const data = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${data}.${sign(data).toString('base64url')}`;
    },
    /** The position, if the cursor is ours, unaltered, and made for this list, organisation and filters. */
    decode(cursor: string, expected: Omit<CursorPayload, 'k'>): string[] {
      const [data, signature, extra] = cursor.split('.');
      if (!data || !signature || extra !== undefined) throw invalidCursor();
      if (!sameText(signature, sign(data).toString('base64url'))) throw invalidCursor();
      const payload = JSON.parse(Buffer.from(data, 'base64url').toString('utf8')) as CursorPayload;
      if (payload.l !== expected.l || payload.o !== expected.o || payload.f !== expected.f || !Array.isArray(payload.k)) throw invalidCursor();
      return payload.k;
    },
  };
}

export type CursorCodec = ReturnType<typeof createCursorCodec>;
