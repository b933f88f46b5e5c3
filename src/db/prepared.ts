// Hot, fixed-shape queries compiled once per dialect and then run with new parameters. Kysely builds and
// compiles a query on every call (tens of microseconds for a join); on the request path that costs more than
// the query itself (measured in bench/: the API-key join took 61 µs through the builder, 15 µs precompiled).
// Only string parameters can be placeholders: the query is built once with sentinel strings in their place.
// An argument may be null at run time (a nullable column of an insert): it is sent as NULL in its placeholder's
// place, so a build must not branch on its arguments.
import type { Compilable, CompiledQuery } from 'kysely';
import type { Db } from './database.ts';

const SENTINEL = '\u0000prepared-param:';

export function preparedQuery<Args extends Array<string | null>, Row>(build: (db: Db, ...args: Args) => Compilable<Row>) {
  const byAdapter = new Map<unknown, { compiled: CompiledQuery<Row>; slots: Array<number | undefined> }>();
  return async function run(db: Db, ...args: Args): Promise<Row[]> {
    const adapter = db.getExecutor().adapter.constructor;
    let entry = byAdapter.get(adapter);
    if (entry === undefined) {
      const sentinels = args.map((_, i) => `${SENTINEL}${i}`) as Args;
      const compiled = build(db, ...sentinels).compile();
      const slots = compiled.parameters.map((p) => (typeof p === 'string' && p.startsWith(SENTINEL) ? Number(p.slice(SENTINEL.length)) : undefined));
      entry = { compiled, slots };
      byAdapter.set(adapter, entry);
    }
    const { compiled, slots } = entry;
    const parameters = compiled.parameters.map((p, i) => (slots[i] === undefined ? p : args[slots[i]!]));
    const result = await db.executeQuery<Row>({ ...compiled, parameters });
    return result.rows;
  };
}
