// The rows SQLite answers, as plain objects made by each statement's compiled literal (sqlite-adapter.ts): the
// same values and keys as node:sqlite's own rows, whatever the column names are.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { NodeSqliteDatabase } from './sqlite-adapter.ts';

const rowsOf = (sql: string) => {
  const db = new NodeSqliteDatabase(':memory:');
  try {
    return db.prepare(sql).all([]) as Array<Record<string, unknown>>;
  } finally {
    db.close();
  }
};

test('a row has its columns as keys, in order, with their values', () => {
  const [row] = rowsOf(`select 1 as id, 'a' as title, null as deleted_at, x'00ff' as bytes`);
  assert.deepEqual(Object.keys(row!), ['id', 'title', 'deleted_at', 'bytes']);
  assert.deepEqual({ ...row }, { id: 1, title: 'a', deleted_at: null, bytes: new Uint8Array([0, 255]) });
  assert.equal(Object.getPrototypeOf(row), Object.prototype);
});

test('a column named twice keeps its last value, as node:sqlite does', () => {
  assert.deepEqual(rowsOf(`select 1 as a, 2 as a`), [{ a: 2 }]);
});

test('any name is only a key: quotes, a newline, backslashes, a name that looks like code; `__proto__` is no prototype', () => {
  const [odd] = rowsOf(`select 1 as "it's ""quoted""", 2 as "line
break", 3 as "back\\slash", 4 as "}; globalThis.hit = 1; ({"`);
  assert.deepEqual(Object.keys(odd!), [`it's "quoted"`, 'line\nbreak', 'back\\slash', '}; globalThis.hit = 1; ({']);
  assert.equal((globalThis as { hit?: unknown }).hit, undefined);
  // `__proto__` (no query of ours names a column so) never becomes the row's prototype.
  const [proto] = rowsOf(`select 1 as id, 'x' as __proto__, 2 as after`);
  assert.equal(Object.getPrototypeOf(proto), Object.prototype);
  assert.equal(proto!.id, 1);
  assert.equal(proto!.after, 2);
});

test('many rows of one statement, and an empty answer', () => {
  assert.deepEqual(rowsOf(`with recursive n(i) as (select 1 union all select i + 1 from n where i < 3) select i from n`), [{ i: 1 }, { i: 2 }, { i: 3 }]);
  assert.deepEqual(rowsOf(`select 1 as a where 0`), []);
});
