// Named statements through pg-shaped-query.ts on a real PostgreSQL, beside node-postgres's own Query on another
// connection: the same rows, keys and values (duplicate names, nulls, custom type parsers); a statement described
// once per connection (no RowDescription after the first run on it), described again where it was parsed again;
// pipeline mode; errors as node-postgres reports them; statements it has run sent together as one implicit
// transaction (batchOn): committed together or not at all, the failing one named, answered in one write.
// PostgreSQL only (the suite runs it with TEST_DATABASE_URL).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { testDatabaseUrl } from '../../test/support/harness.ts';
import { batchOn, queryOn, type BatchOutcome } from './pg-shaped-query.ts';

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

  describe('batches (batchOn): statements this connection has run, as one implicit transaction', () => {
    const write = (name: string, text: string) => (...values: unknown[]) => ({ name, text, values });
    // Each answers the transaction it ran in, so that one transaction for all of them shows.
    const insert = write('batch_test_insert', 'insert into batch_t (v) values ($1) returning v, pg_current_xact_id()::text as xid');
    const check = write('batch_test_check', 'select 10 / $1::int as q, pg_current_xact_id()::text as xid');
    const kept = async () => (await plain.query('select v from batch_t order by v')).rows.map((r: { v: number }) => r.v);
    const settled = (batch: Promise<BatchOutcome> | undefined) => {
      assert.ok(batch !== undefined, 'sent as a batch');
      return batch;
    };

    before(async () => {
      await plain.query('drop table if exists batch_t; create table batch_t (v int primary key)');
    });
    after(async () => {
      await plain.query('drop table if exists batch_t');
    });

    test('only statements the connection has parsed and described go as a batch; the rest are sent by queryOn, nothing by batchOn', async () => {
      assert.equal(batchOn(shaped, [insert(1)]), undefined, 'never run on this connection');
      await queryOn(shaped, insert(1));
      await queryOn(shaped, check(1));
      assert.equal(batchOn(shaped, [insert(2), { text: 'select 1' }]), undefined, 'an unnamed statement');
      assert.equal(batchOn(shaped, [{ ...insert(2), text: 'select 2 as v' }]), undefined, 'another text under the name');
      const circular: Record<string, unknown> = {};
      circular.self = circular;
      assert.equal(batchOn(shaped, [insert(2), check(circular)]), undefined, 'a value node-postgres cannot send');
      assert.deepEqual(await kept(), [1], 'nothing of a batch not sent was run');
    });

    test('a batch is one transaction, committed: each statement its own rows, as queryOn makes them', async () => {
      await queryOn(shaped, insert(100));
      await queryOn(shaped, check(1));
      const outcome = await settled(batchOn(shaped, [insert(101), check(2), insert(102)]));
      assert.ok(outcome.ok);
      const [first, second, third] = outcome.results;
      assert.deepEqual([first.command, first.rowCount, second.command, third.rowCount], ['INSERT', 1, 'SELECT', 1]);
      assert.deepEqual([first.rows[0].v, second.rows[0].q, third.rows[0].v], [101, 5, 102]);
      assert.deepEqual(Object.keys(second.rows[0]), ['q', 'xid']);
      assert.equal(new Set(outcome.results.map((r) => r.rows[0].xid)).size, 1, 'one transaction');
      assert.deepEqual((await kept()).filter((v) => v > 100), [101, 102], 'committed, seen from another connection');
      // The connection goes on: a statement alone, then another batch, in another transaction.
      assert.equal((await queryOn(shaped, check(5))).rows[0].q, 2);
      const next = await settled(batchOn(shaped, [check(10)]));
      assert.ok(next.ok && next.results[0].rows[0].xid !== first.rows[0].xid);
    });

    test('a failing statement rolls the whole batch back and is named; the connection and its statements go on', async () => {
      await queryOn(shaped, insert(200));
      await queryOn(shaped, check(1));
      const outcome = await settled(batchOn(shaped, [insert(201), check(0), insert(202)]));
      assert.ok(!outcome.ok);
      assert.equal(outcome.at, 1, 'the second statement failed');
      assert.ok(outcome.err instanceof pg.DatabaseError && (outcome.err as pg.DatabaseError).code === '22012');
      assert.deepEqual((await kept()).filter((v) => v > 200), [], 'the statement before it was rolled back, the one after never ran');
      // A key taken fails the last statement: the two before it are undone too.
      const taken = await settled(batchOn(shaped, [insert(203), check(1), insert(200)]));
      assert.ok(!taken.ok && taken.at === 2 && (taken.err as pg.DatabaseError).code === '23505');
      assert.deepEqual((await kept()).filter((v) => v > 200), []);
      const after = await settled(batchOn(shaped, [insert(204), check(2)]));
      assert.ok(after.ok);
      assert.deepEqual((await kept()).filter((v) => v > 200), [204]);
    });

    test('rows that cannot be read here do not undo a committed batch: that statement is named, the others answered', async () => {
      // A type parser that throws, for one type only.
      const refusing = {
        getTypeParser: (oid: number, format?: 'text' | 'binary') => (oid === 21 ? () => { throw new Error('int2 refused'); } : types.getTypeParser(oid, format)),
      } as pg.CustomTypesConfig;
      const strict = new pg.Client({ connectionString: testDatabaseUrl, types: refusing, pipeline: true } as pg.ClientConfig);
      await strict.connect();
      try {
        const unreadable = write('batch_test_unreadable', 'select $1::int2 as small');
        await queryOn(strict, insert(300));
        await assert.rejects(queryOn(strict, unreadable(1)), /int2 refused/);
        const outcome = await settled(batchOn(strict, [insert(301), unreadable(2), insert(302)]));
        assert.ok(outcome.ok, 'PostgreSQL committed it');
        assert.equal(outcome.unread?.at, 1);
        assert.match(String(outcome.unread?.err), /int2 refused/);
        assert.equal(outcome.results[2].rows[0].v, 302);
        assert.deepEqual((await kept()).filter((v) => v > 300), [301, 302]);
      } finally {
        await strict.end();
      }
    });
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
