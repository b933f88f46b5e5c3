// The plan each engine chooses for a statement, and what in it would make the statement's cost grow with the
// table: reading a whole table, reading a whole index, or sorting the rows it found. Used by the test that keeps
// every list query on an index (test/query-plans.test.ts) and by the benchmark that shows the plans at scale.
import { sql, type CompiledQuery } from 'kysely';
import type { Db, DialectName } from './database.ts';

export interface ExplainOptions {
  /**
   * PostgreSQL chooses a sequential scan or a sort for tables of a few rows even where an index would serve.
   * With this set, it is told to avoid both if it can at all, so that a plan which still has one shows that no
   * index serves the query. (SQLite, without statistics, plans as if every table were large.)
   */
  preferIndexes?: boolean;
}

/** The plan, one line per step, as the engine prints it. */
export async function explain(db: Db, dialect: DialectName, query: CompiledQuery, options: ExplainOptions = {}): Promise<string[]> {
  // A new statement: not the query's own (whose statement name, if prepared, stands for its own text).
  const statement = (prefix: string): CompiledQuery => ({ query: query.query, queryId: query.queryId, sql: `${prefix} ${query.sql}`, parameters: query.parameters });
  if (dialect === 'sqlite') {
    const { rows } = await db.executeQuery<{ id: number; parent: number; detail: string }>(statement('explain query plan'));
    const depth = new Map<number, number>([[0, 0]]);
    return rows.map((r) => {
      const d = (depth.get(r.parent) ?? 0) + 1;
      depth.set(r.id, d);
      return `${'  '.repeat(d - 1)}${r.detail}`;
    });
  }
  return db.transaction().execute(async (tx) => {
    if (options.preferIndexes) {
      await sql`set local enable_seqscan = off`.execute(tx);
      await sql`set local enable_sort = off`.execute(tx);
    }
    const { rows } = await tx.executeQuery<{ 'QUERY PLAN': string }>(statement('explain'));
    return rows.map((r) => r['QUERY PLAN']);
  });
}

/** Steps of a plan whose cost grows with the table: a full table or index scan, or a sort of what was found. */
export function growingSteps(dialect: DialectName, plan: string[]): string[] {
  if (dialect === 'sqlite') {
    // `SEARCH t USING INDEX i (a=? AND b>?)` reads a range; `SCAN t` reads the table and `SCAN t USING INDEX i`
    // the whole index; a temporary b-tree sorts everything the search found.
    return plan.filter((line) => /^\s*SCAN (?!CONSTANT ROW|\(subquery)/.test(line) || /USE TEMP B-TREE FOR (ORDER|GROUP) BY/.test(line));
  }
  // PostgreSQL's text plan: a node per line (`->  Index Scan using i on t …`), its details indented below it.
  const nodes: Array<{ line: string; details: string[] }> = [];
  for (const [i, line] of plan.entries()) {
    if (i === 0 || line.trim().startsWith('->')) nodes.push({ line, details: [] });
    else nodes.at(-1)!.details.push(line);
  }
  return nodes
    .filter(({ line, details }) => {
      const step = line.trim().replace(/^->\s*/, '');
      if (/^(Seq Scan|Sort|Incremental Sort)\b/.test(step)) return true;
      // An index scan without a condition reads the whole index.
      return /^Index (Only )?Scan\b/.test(step) && !details.some((d) => d.trim().startsWith('Index Cond:'));
    })
    .map(({ line }) => line);
}
