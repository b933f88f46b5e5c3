// Recognising constraint violations the same way on both engines.

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errcode?: number; message?: string };
  if (e?.code === '23505') return true; // PostgreSQL unique_violation
  return e?.errcode === 2067 || e?.errcode === 1555 || /UNIQUE constraint failed/.test(e?.message ?? '');
}

/** Any integrity constraint refused the statement: unique, foreign key, check, not null. */
export function isConstraintViolation(err: unknown): boolean {
  const e = err as { code?: string; errcode?: number; message?: string };
  if (typeof e?.code === 'string' && e.code.startsWith('23')) return true; // PostgreSQL class 23, integrity_constraint_violation
  // SQLite: SQLITE_CONSTRAINT (19) and its extended codes.
  return (typeof e?.errcode === 'number' && (e.errcode & 0xff) === 19) || /constraint failed/i.test(e?.message ?? '');
}

/** PostgreSQL's lock_not_available: a session's lock timeout expired (a shared writer's), and the statement did nothing. */
export const isLockTimeout = (err: unknown) => (err as { code?: unknown } | undefined)?.code === '55P03';
