// node-postgres's own helpers (pg/lib/utils.js, exported by its package.json), which @types/pg does not
// describe: pg-shaped-query.ts binds values exactly as node-postgres's Query does.
declare module 'pg/lib/utils.js' {
  const utils: { prepareValue(value: unknown): unknown };
  export default utils;
}
