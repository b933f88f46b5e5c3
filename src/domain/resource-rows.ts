// What the services of the API's resources write alike: the columns a new resource row has besides its own,
// and a read that answers 404 when the row is not there.
import { ApiError } from '../errors/api-error.ts';
import type { ErrorCode } from '../errors/error-catalog.ts';
import { newId } from '../ids.ts';
import { andThen, type MaybeAsync } from '../maybe-async.ts';

export interface ResourceRowColumns {
  id: string;
  organisation_id: string;
  external_id: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** A new id, the organisation, the caller's external id (or none), made and changed `at`, and live. */
export function newResourceRow(organisationId: string, externalId: string | null | undefined, at: string): ResourceRowColumns {
  return { id: newId(), organisation_id: organisationId, external_id: externalId ?? null, created_at: at, updated_at: at, deleted_at: null };
}

/** The row `find` reads, or the 404 `code` with `detail` when there is none; at once if the row is (src/maybe-async.ts). */
export function foundOr404<R>(find: MaybeAsync<R | undefined>, code: ErrorCode, detail: string): MaybeAsync<R> {
  return andThen(find, (row) => {
    if (!row) throw new ApiError(code, detail);
    return row;
  });
}
