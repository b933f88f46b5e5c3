// External ids (spec: conventions): a caller's own key for a resource, unique in its organisation.
import { isUniqueViolation } from '../db/errors.ts';
import { ApiError } from '../errors/api-error.ts';

/** Runs an insert whose only unique key a caller controls is external_id; a clash is a 409, not a 500. */
export async function insertWithExternalId(insert: () => Promise<void>, what: string, externalId: string | null | undefined): Promise<void> {
  try {
    await insert();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError('resource.external_id_taken', `Another ${what} has external_id ${JSON.stringify(externalId)}.`);
    throw err;
  }
}
