// A write in one statement on PostgreSQL, without BEGIN or COMMIT: a transaction's final statement
// (final-statement.ts) with the request's riders (riders.ts: the cached organisation's check) and the offer's
// tail (the request's audit entry) folded into it. node-postgres's cost is per statement, not per round trip:
// the same write sent as BEGIN, check, change, audit entry, COMMIT costs the service about 2.5 times the CPU of
// one statement doing all of it, and PostgreSQL a third more (bench/pg-statement-shapes.ts, bench/README.md).
// One statement is atomic by itself (an implicit transaction): if any part fails, nothing of it is kept. A
// prepared read is folded with its riders the same way, one statement instead of two.
//
//   with <the final statement's own CTEs>, atrium_tail_0 as (<audit entry>),
//        atrium_main as materialized (<its main query>)
//   select atrium_main.* from atrium_main where (<rider 0>) and …
//
// The tail's inserts run whatever reads them (data-modifying CTEs always do). The riders are the `where`
// clause's uncorrelated subqueries: PostgreSQL checks such a condition once, before it reads a row of
// `atrium_main`, so a rider is checked even when the final statement returns no row (driver test). Parameters
// are renumbered after the final statement's own. A statement this cannot take apart (a comment, dollar
// quoting, a `with` it cannot split) is not folded: the driver then sends the transaction as before.
import type { CompiledQuery } from 'kysely';

/** What this does not read: comments, and `$` not followed by a parameter's number (dollar quoting). */
const UNREADABLE = /--|\/\*|\$(?!\d)/;

/** The text's top-level `with` list and the main query after it, or undefined when it cannot find them. */
function splitWith(text: string): { ctes: string; main: string } | undefined {
  const start = /^\s*with\s+/i.exec(text)!;
  let depth = 0;
  for (let i = start[0].length; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      // A doubled quote ('') is two strings back to back: the same for counting parentheses.
      i = text.indexOf(c, i + 1);
      if (i === -1) return undefined;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) {
      // The end of a CTE, unless it was a column list (`name (a, b) as (…)`): the list goes on after a comma, or
      // the main query starts.
      const rest = text.slice(i + 1);
      if (/^\s*as\b/i.test(rest)) continue;
      const comma = /^\s*,/.exec(rest);
      if (comma === null) return { ctes: text.slice(start[0].length, i + 1), main: rest.trimStart() };
      i += comma[0].length;
    }
  }
  return undefined;
}

/** `text` with its parameters $1… renumbered from `offset` + 1 (quoted strings and names left as they are). */
const shiftParameters = (text: string, offset: number) => text.replace(/'[^']*'|"[^"]*"|\$(\d+)/g, (match, n: string | undefined) => (n === undefined ? match : `$${Number(n) + offset}`));

/**
 * The folded text for each combination of texts seen, found by walking one map a text: the final statement's,
 * the tail's count, each tail's, each rider's. The texts are the same strings on every request (compiled once
 * per shape), whose hashes V8 keeps: a key made of them by concatenation was a new string to flatten and hash on
 * every write (joining the long final text to the others was once a fifth of a fold). Parameters are
 * concatenated in order.
 */
interface FoldedTexts extends Map<string | number, FoldedTexts> {
  /** The folded text of the path that ends here; null when it cannot be folded. */
  folded?: string | null;
}
const foldedTexts: FoldedTexts = new Map();
let foldedCount = 0;
const MAX_FOLDED_TEXTS = 512;

/** The node at `key` under `node`; made when `make`, else undefined when there is none. */
function step(node: FoldedTexts | undefined, key: string | number, make: boolean): FoldedTexts | undefined {
  let next = node?.get(key);
  if (next === undefined && make && node !== undefined) node.set(key, (next = new Map()));
  return next;
}

/** The node of this combination of texts; made where missing when `make`. */
function foldedNode(final: CompiledQuery, tail: readonly CompiledQuery[], riders: readonly CompiledQuery[], make: boolean): FoldedTexts | undefined {
  let node = step(step(foldedTexts, final.sql, make), tail.length, make);
  for (const q of tail) node = step(node, q.sql, make);
  for (const q of riders) node = step(node, q.sql, make);
  return node;
}

function foldTexts(final: CompiledQuery, tail: readonly CompiledQuery[], riders: readonly CompiledQuery[]): string | null {
  const parts = [final, ...tail, ...riders];
  if (!/^\s*(with|select|insert|update|delete)\s/i.test(final.sql) || tail.some((q) => !/^\s*insert\s/i.test(q.sql)) || parts.some((q) => UNREADABLE.test(q.sql))) return null;
  // A `with` that holds a write must stay at the top level: one this cannot split is not folded at all.
  const split = /^\s*with\s/i.test(final.sql) ? splitWith(final.sql) : { ctes: '', main: final.sql };
  if (split === undefined) return null;
  let offset = final.parameters.length;
  const shifted = (query: CompiledQuery) => {
    const text = shiftParameters(query.sql, offset);
    offset += query.parameters.length;
    return text;
  };
  const ctes = [...(split.ctes === '' ? [] : [split.ctes]), ...tail.map((query, i) => `atrium_tail_${i} as (${shifted(query)})`)];
  // Materialized, so that its own conditions stay inside it: the outer `where` is the riders' alone, a one-time
  // filter PostgreSQL evaluates before anything else (inlined, a constant condition of the main query could be
  // merged with it and spare the riders).
  ctes.push(`atrium_main as materialized (${split.main})`);
  const conditions = riders.map((rider) => `(${shifted(rider)})`);
  return `with ${ctes.join(', ')} select atrium_main.* from atrium_main${conditions.length > 0 ? ` where ${conditions.join(' and ')}` : ''}`;
}

/**
 * `final` with `tail` (data-modifying statements) and `riders` (each a one-row select that raises when its premise
 * fails) folded into one statement answering `final`'s rows; undefined when one of them cannot be folded. The
 * texts repeat (one per shape of write), so each combination is taken apart once.
 */
export function foldStatement(final: CompiledQuery, tail: readonly CompiledQuery[], riders: readonly CompiledQuery[]): CompiledQuery | undefined {
  let sql = foldedNode(final, tail, riders, false)?.folded;
  if (sql === undefined) {
    sql = foldTexts(final, tail, riders);
    if (foldedCount < MAX_FOLDED_TEXTS) {
      foldedNode(final, tail, riders, true)!.folded = sql;
      foldedCount++;
    }
  }
  if (sql === null) return undefined;
  const parameters = [...final.parameters];
  for (const q of tail) parameters.push(...q.parameters);
  for (const q of riders) parameters.push(...q.parameters);
  // Built as Kysely's CompiledQuery.raw would, without its random query id (the final statement's serves).
  return { sql, parameters, query: final.query, queryId: final.queryId };
}
