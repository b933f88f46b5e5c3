// What a compiled query may tell the database driver beyond its SQL (set by prepared.ts, savepoints.ts and
// deferred-writes.ts, read by postgres-driver.ts and, for `sharedInTurn` alone, by SQLite's direct reads in
// database.ts): a statement name, so that PostgreSQL parses it once per connection, and whether a transaction
// may send it later, with its next statement or its COMMIT.
export const STATEMENT_HINTS = Symbol('atrium.statementHints');

export interface StatementHints {
  name?: string;
  deferrable: boolean;
  /**
   * A deferrable write that can fail on a constraint (a unique key): it is sent no later than the release of the
   * savepoint it was issued in, so that its failure undoes that savepoint's work alone (a bulk operation), not
   * the one after it.
   */
  mayFail?: boolean;
  /** What its failure means to the caller (a unique key taken: a 409), thrown in place of the database's error. */
  translate?: (err: unknown) => unknown;
  /** `release savepoint`: the end of the scope `mayFail` speaks of. */
  releasesSavepoint?: boolean;
  /** Its transaction's last statement, which fails when the transaction must not commit (final-statement.ts). */
  final?: boolean;
  /** Named by its text, whose shapes are few (postgres-driver.ts: a prepared read with its riders folded in). */
  byText?: boolean;
  /**
   * SQLite: the reads of one turn that ask it with the same arguments share its rows (sqlite-adapter.ts,
   * readInTurn). For rows nobody changes once read: the organisation a request is for.
   */
  sharedInTurn?: boolean;
}

export function hintsOf(query: object): StatementHints | undefined {
  return (query as { [STATEMENT_HINTS]?: StatementHints })[STATEMENT_HINTS];
}
