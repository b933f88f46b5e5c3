// Named statements through pg-shaped-query.ts on a real PostgreSQL, beside node-postgres's own Query on another
// connection: the same rows, keys and values (duplicate names, nulls, custom type parsers); a statement described
// once per connection (no RowDescription after the first run on it), described again where it was parsed again;
// pipeline mode; errors as node-postgres reports them.
// PostgreSQL only (the suite runs it with TEST_DATABASE_URL).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { testDatabaseUrl } from '../../test/support/harness.ts';
import { queryOn } from './pg-shaped-query.ts';

const skip = testDatabaseUrl ? false : 'PostgreSQL only: run with TEST_DATABASE_URL';

// As postgres-database.ts does: a parser of our own for one type, node-postgres's for the rest.
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (v: string) => Number(v);
    return pg.types.getTypeParser(oid, format);
  },
} as pg.CustomTypesConfig;

const SHAPES = `select 1::int8 as id, 'a'::text as title, null::text as empty, true as on, '{"k":[1,2]}'::jsonb as data,
  2 as dup, 3 as dup, '2026-11-29 12:00:00+00'::timestamptz as at, x as n from generate_series(1, 3) x where x <= $1`;

describe('named statements through pg-shaped-query.ts', { skip }, () => {
  let shaped: pg.Client;
  let plain: pg.Client;
  /** RowDescription messages the shaped connection received. */
  let descriptions = 0;

  before(async () => {
    shaped = new pg.Client({ connectionString: testDatabaseUrl, types, pipeline: true } as pg.ClientConfig);
    plain = new pg.Client({ connectionString: testDatabaseUrl, types });
    await Promise.all([shaped.connect(), plain.connect()]);
    (shaped as unknown as { connection: { on(event: string, listener: () => void): void } }).connection.on('rowDescription', () => descriptions++);
  });
  after(async () => {
    await shaped?.end();
    await plain?.end();
  });

  test('the same rows as node-postgres makes, described on the first run only', async () => {
    const config = { name: 'shaped_test_1', text: SHAPES, values: [3] };
    const expected = (await plain.query(config)).rows;
    assert.equal(expected.length, 3);
    const before = descriptions;
    for (let run = 0; run < 3; run++) {
      const result = await queryOn(shaped, { ...config, values: [3 - run] });
      assert.deepEqual(result.rows, expected.slice(0, 3 - run));
      for (const row of result.rows) assert.deepEqual(Object.keys(row), ['id', 'title', 'empty', 'on', 'data', 'dup', 'at', 'n']);
      assert.equal(result.rowCount, 3 - run);
      assert.equal(result.command, 'SELECT');
      assert.deepEqual(
        result.fields.map((f) => f.name),
        ['id', 'title', 'empty', 'on', 'data', 'dup', 'dup', 'at', 'n'],
      );
    }
    assert.equal(descriptions - before, 1, 'described once, then run without Describe');
    assert.deepEqual(expected[0], { id: 1, title: 'a', empty: null, on: true, data: { k: [1, 2] }, dup: 3, at: expected[0].at, n: 1 });
  });

  test('statements sent together in pipeline mode keep their own rows', async () => {
    const a = { name: 'shaped_test_a', text: 'select $1::int as a', values: [1] };
    const b = { name: 'shaped_test_b', text: 'select $1::text as b, $2::int as c', values: ['x', 2] };
    const results = await Promise.all([queryOn(shaped, a), queryOn(shaped, b), queryOn(shaped, { ...a, values: [7] }), queryOn(shaped, { ...b, values: ['y', 8] })]);
    assert.deepEqual(
      results.map((r) => r.rows),
      [[{ a: 1 }], [{ b: 'x', c: 2 }], [{ a: 7 }], [{ b: 'y', c: 8 }]],
    );
  });

  test("a statement's error is node-postgres's, and the connection goes on; a write without rows, and an unnamed statement", async () => {
    const failing = { name: 'shaped_test_fail', text: 'select 1 / $1::int as q', values: [1] };
    assert.deepEqual((await queryOn(shaped, failing)).rows, [{ q: 1 }]);
    await assert.rejects(queryOn(shaped, { ...failing, values: [0] }), (err: Error & { code?: string }) => err instanceof pg.DatabaseError && err.code === '22012');
    assert.deepEqual((await queryOn(shaped, { ...failing, values: [2] })).rows, [{ q: 0 }]);
    const write = await queryOn(shaped, { name: 'shaped_test_write', text: 'create temporary table if not exists shaped_t (v int)' });
    assert.deepEqual(write.rows, []);
    assert.deepEqual((await queryOn(shaped, { text: 'select $1::int as unnamed', values: [5] })).rows, [{ unnamed: 5 }]);
  });

  test('a statement parsed again on its connection is described again', async () => {
    const config = { name: 'shaped_test_again', text: 'select $1::int as v', values: [1] };
    await queryOn(shaped, config);
    await queryOn(shaped, { text: 'deallocate shaped_test_again' });
    // node-postgres does not know the statement is gone: its next run fails, and the one after parses it again.
    const connection = (shaped as unknown as { connection: { parsedStatements: Record<string, unknown> } }).connection;
    delete connection.parsedStatements[config.name];
    const before = descriptions;
    assert.deepEqual((await queryOn(shaped, { ...config, values: [2] })).rows, [{ v: 2 }]);
    assert.equal(descriptions - before, 1);
  });
});
