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
import { CompiledQuery } from 'kysely';

/** The text's top-level `with` list and the main query after it, or undefined when it has none. */
function splitWith(text: string): { ctes: string; main: string } | undefined {
  const start = /^\s*with\s+/i.exec(text);
  if (!start) return undefined;
  let depth = 0;
  for (let i = start[0].length; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end === -1) return undefined;
      i = end; // a doubled quote ('') is two strings back to back: the same for counting parentheses
    } else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      // The end of a CTE: the list goes on after a comma, or the main query starts.
      if (depth === 0) {
        // A column list (`name (a, b) as (…)`) is not the end of its CTE.
        if (/^\s*as\b/i.test(text.slice(i + 1))) continue;
        const rest = /^\s*(,)?/.exec(text.slice(i + 1))!;
        if (rest[1] === undefined) return { ctes: text.slice(start[0].length, i + 1), main: text.slice(i + 1 + rest[0].length) };
        i += rest[0].length;
      }
    } else if (c === '$' && text[i + 1] === '$') return undefined; // dollar quoting: not ours to parse
    else if ((c === '-' && text[i + 1] === '-') || (c === '/' && text[i + 1] === '*')) return undefined;
  }
  return undefined;
}

/** `text` with its parameters $1… renumbered from `offset` + 1; undefined if it holds what this cannot read. */
function shiftParameters(text: string, offset: number): string | undefined {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "'" || c === '"') {
      const end = text.indexOf(c, i + 1);
      if (end === -1) return undefined;
      out += text.slice(i, end + 1);
      i = end;
    } else if (c === '$') {
      const digits = /^\d+/.exec(text.slice(i + 1));
      if (!digits) return undefined; // dollar quoting
      out += `$${Number(digits[0]) + offset}`;
      i += digits[0].length;
    } else if ((c === '-' && text[i + 1] === '-') || (c === '/' && text[i + 1] === '*')) return undefined;
    else out += c;
  }
  return out;
}

/**
 * `final` with `tail` (data-modifying statements) and `riders` (each a one-row select that raises when its premise
 * fails) folded into one statement answering `final`'s rows; undefined when one of them cannot be folded.
 */
export function foldStatement(final: CompiledQuery, tail: readonly CompiledQuery[], riders: readonly CompiledQuery[]): CompiledQuery | undefined {
  if (!/^\s*(with|select|insert|update|delete)\s/i.test(final.sql) || /--|\/\*|\$\$/.test(final.sql)) return undefined;
  // A `with` that holds a write must stay at the top level: one this cannot split is not folded at all.
  const split = /^\s*with\s/i.test(final.sql) ? splitWith(final.sql) : { ctes: '', main: final.sql };
  if (split === undefined) return undefined;
  const parameters: unknown[] = [...final.parameters];
  const shifted = (query: CompiledQuery): string | undefined => {
    const text = shiftParameters(query.sql, parameters.length);
    if (text !== undefined) parameters.push(...query.parameters);
    return text;
  };
  const ctes = split.ctes === '' ? [] : [split.ctes];
  for (const [i, query] of tail.entries()) {
    if (!/^\s*insert\s/i.test(query.sql)) return undefined;
    const text = shifted(query);
    if (text === undefined) return undefined;
    ctes.push(`atrium_tail_${i} as (${text})`);
  }
  // Materialized, so that its own conditions stay inside it: the outer `where` is the riders' alone, a one-time
  // filter PostgreSQL evaluates before anything else (inlined, a constant condition of the main query could be
  // merged with it and spare the riders).
  ctes.push(`atrium_main as materialized (${split.main})`);
  const conditions: string[] = [];
  for (const rider of riders) {
    const text = shifted(rider);
    if (text === undefined) return undefined;
    conditions.push(`(${text})`);
  }
  const sql = `with ${ctes.join(', ')} select atrium_main.* from atrium_main${conditions.length > 0 ? ` where ${conditions.join(' and ')}` : ''}`;
  return { ...CompiledQuery.raw(sql, parameters), query: final.query };
}
