// compileByShape against Kysely's own compiler: a statement of a shape seen before is the text and parameters
// Kysely compiles for it, value for value, whatever the values, without being built again; another shape gets
// its own text; a part it cannot key is compiled as it is.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { DummyDriver, Kysely, PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql, type RawBuilder } from 'kysely';
import type { Tables } from './tables.ts';
import { compileByShape, type ShapeBuild } from './statement-shapes.ts';

// Compiles as PostgreSQL would; nothing is sent anywhere.
const db = new Kysely<Tables>({
  dialect: { createAdapter: () => new PostgresAdapter(), createDriver: () => new DummyDriver(), createIntrospector: (k) => new PostgresIntrospector(k), createQueryCompiler: () => new PostgresQueryCompiler() },
});

const column = sql.ref('t.title');
/** A statement of the shape the one-statement writes make: own values, a part used twice, parts nested and joined. */
const statement =
  (key: string): ShapeBuild<unknown> =>
  (value, part) =>
    sql`with u as (update t set title = ${part(0)}, at = ${value(1)}::timestamptz where org = ${value(0)} and ${column} is distinct from ${part(0)}${sql.join(
      [part(1), part(2)].map((p) => sql` and ${p}`),
      sql``,
    )} returning *) select ${`${key} made`}::text, u.* from u`;

/** The parts a caller makes: builders with values inside, nested and joined. */
const partsOf = (title: string, names: string[], limit: number): RawBuilder<unknown>[] => [
  sql`${title}::text`,
  sql`name in (${sql.join(names.map((n) => sql`${n}`))})`,
  sql`(select count(*) from x where x.n < ${limit} and ${sql.ref('x.kind')} = ${'kind'}) > 0`,
];

function both(key: string, values: unknown[], parts: RawBuilder<unknown>[]) {
  const build = statement(key);
  let built = 0;
  const shaped = compileByShape(db, [key], values, parts, (value, part) => (built++, build(value, part)));
  const direct = build((i) => values[i], (i) => parts[i]).compile(db);
  return { shaped: { sql: shaped.sql, parameters: shaped.parameters }, direct: { sql: direct.sql, parameters: direct.parameters }, built };
}

describe('statements compiled by shape', () => {
  test('a shape seen before is not built again, and gives the text and parameters Kysely compiles', () => {
    const first = both('s1', ['org-a', '2026-11-29T00:00:00Z'], partsOf('First', ['a', 'b'], 3));
    assert.deepEqual(first.shaped, first.direct);
    assert.equal(first.built, 1);
    const again = both('s1', ['org-b', '2026-11-30T00:00:00Z'], partsOf('Second', ['c', 'd'], 7));
    assert.deepEqual(again.shaped, again.direct);
    assert.equal(again.built, 0, 'the shape was compiled once');
    assert.equal(again.shaped.sql, first.shaped.sql);
    assert.deepEqual(again.shaped.parameters, ['Second', '2026-11-30T00:00:00Z', 'org-b', 'Second', 'c', 'd', 7, 'kind', 's1 made']);
  });

  test('another shape (another key, or parts of another shape) gets its own text', () => {
    const three = both('s1', ['org-a', '2026-11-29T00:00:00Z'], partsOf('Three', ['a', 'b', 'c'], 3));
    assert.deepEqual(three.shaped, three.direct);
    assert.equal(three.built, 1, 'three names are another shape than two');
    const otherKey = both('s2', ['org-a', '2026-11-29T00:00:00Z'], partsOf('Other', ['a', 'b'], 3));
    assert.deepEqual(otherKey.shaped, otherKey.direct);
    assert.equal(otherKey.built, 1);
  });

  test('a part it cannot key (a literal) is built and compiled as it is, every time', () => {
    const parts = () => [sql`${'T'}::text`, sql`kind = ${sql.lit('fixed')}`, sql`true`];
    for (let i = 0; i < 2; i++) {
      const literal = both('s3', ['org-a', 'now'], parts());
      assert.deepEqual(literal.shaped, literal.direct);
      assert.equal(literal.built, 1);
    }
  });
});
