// What a compiled query may tell the database driver beyond its SQL (set by prepared.ts, read by
// postgres-driver.ts; SQLite ignores them): a statement name, so that PostgreSQL parses it once per connection,
// and whether a transaction may send it later, with its next statement or its COMMIT.
export const STATEMENT_HINTS = Symbol('atrium.statementHints');

export interface StatementHints {
  name: string;
  deferrable: boolean;
}

export function hintsOf(query: object): StatementHints | undefined {
  return (query as { [STATEMENT_HINTS]?: StatementHints })[STATEMENT_HINTS];
}
