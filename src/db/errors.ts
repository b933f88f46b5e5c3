// Recognising constraint violations the same way on both engines.

export function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: string; errcode?: number; message?: string };
  if (e?.code === '23505') return true; // PostgreSQL unique_violation
  return e?.errcode === 2067 || e?.errcode === 1555 || /UNIQUE constraint failed/.test(e?.message ?? '');
}
