// Rows as plain objects from the arrays of values a driver answers, made by an object literal of the result's
// own columns compiled once per result shape: same keys in the same order, a column named twice keeping its last
// value. A loop assigning `row[column]` goes through V8's megamorphic keyed store for every field, since every
// table's columns pass through the same line: perf put that at a sixth of a SQLite read's node:sqlite time, and
// node-postgres's own rows cost the PostgreSQL read as much (bench/README.md). Used by sqlite-adapter.ts and
// pg-shaped-query.ts.
//
// The column names are JSON-quoted into the literal, so any name is only ever a key. A result with a column named
// `__proto__` (which a literal would take for the prototype; no query of ours names one) keeps the loop, where
// assigning it a value that is not an object changes nothing.

export type RowMaker = (values: ReadonlyArray<unknown>) => Record<string, unknown>;
/** A column's text made a value (PostgreSQL's type parsers); a null stays null. */
export type ValueParser = (text: string) => unknown;

export function rowMaker(columns: readonly string[], parsers?: readonly ValueParser[]): RowMaker {
  const value = parsers ? (v: unknown, c: number) => (v === null ? null : parsers[c]!(v as string)) : (v: unknown) => v;
  if (columns.includes('__proto__')) {
    return (values) => {
      const row: Record<string, unknown> = {};
      for (let c = 0; c < columns.length; c++) row[columns[c]!] = value(values[c], c);
      return row;
    };
  }
  const fields = columns.map((name, c) => `${JSON.stringify(name)}: ${parsers ? `values[${c}] === null ? null : parsers[${c}](values[${c}])` : `values[${c}]`}`);
  return new Function('parsers', `return function (values) { return { ${fields.join(', ')} }; };`)(parsers) as RowMaker;
}

const MAX_CACHED = 1_000;
const byColumns = new Map<string, RowMaker>();

/** rowMaker for raw values, compiled once per list of columns (a full cache starts over). */
export function rowMakerFor(columns: readonly string[]): RowMaker {
  const key = columns.join('\u0000');
  let make = byColumns.get(key);
  if (make === undefined) {
    if (byColumns.size >= MAX_CACHED) byColumns.clear();
    byColumns.set(key, (make = rowMaker(columns)));
  }
  return make;
}
