// node-postgres's own helpers (pg/lib/utils.js, pg/lib/result.js, exported by its package.json), which @types/pg does not
// describe: pg-shaped-query.ts binds values exactly as node-postgres's Query does.
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}

// Its result of one statement (pg/lib/result.js): pg-shaped-query.ts makes one for each statement of a batch,
// so that each reads back as node-postgres's own would (command, rowCount, rows, fields).
declare module 'pg/lib/result.js' {
  import type pg from 'pg';
  const Result: new (rowMode: undefined, types: unknown) => pg.QueryResult & { addCommandComplete(msg: unknown): void };
  export default Result;
}
