// External ids (spec: conventions): a caller's own key for a resource, unique in its organisation.
import { isUniqueViolation } from '../db/errors.ts';
import type { FailureTranslation } from '../db/deferred-writes.ts';
import { ApiError } from '../errors/api-error.ts';

/**
 * Runs an insert whose only unique key a caller controls is external_id; a clash is a 409, not a 500. The
 * insert is handed the translation, so that it may be a deferred write (db/deferred-writes.ts) whose failure
 * surfaces later in the transaction and still reads as the 409.
 */
export async function insertWithExternalId(insert: (onClash: FailureTranslation) => Promise<void>, what: string, externalId: string | null | undefined): Promise<void> {
  const onClash = (err: unknown) => (isUniqueViolation(err) ? externalIdTaken(what, externalId) : err);
  try {
    await insert(onClash);
  } catch (err) {
    throw onClash(err);
  }
}

/** The 409 for an external id another resource of the kind has (found by the index, or in a bulk batch's memory). */
export const externalIdTaken = (what: string, externalId: string | null | undefined) => new ApiError('resource.external_id_taken', `Another ${what} has external_id ${JSON.stringify(externalId)}.`);
