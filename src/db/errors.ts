// Recognising constraint violations the same way on both engines.
import { ApiError } from '../http/api-error.ts';

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errcode?: number; message?: string };
  if (e?.code === '23505') return true; // PostgreSQL unique_violation
  return e?.errcode === 2067 || e?.errcode === 1555 || /UNIQUE constraint failed/.test(e?.message ?? '');
}

/** Runs an insert whose only unique key a caller controls is external_id; a clash is a 409, not a 500. */
export async function insertWithExternalId(insert: () => Promise<void>, what: string, externalId: string | null | undefined): Promise<void> {
  try {
    await insert();
  } catch (err) {
    if (isUniqueViolation(err)) throw new ApiError('resource.external_id_taken', `Another ${what} has external_id ${JSON.stringify(externalId)}.`);
    throw err;
  }
}
