// How a write and its riders are folded into one statement (single-statement.ts), as text: the driver tests
// (postgres-driver.test.ts) run folded statements on PostgreSQL; these check the folding itself, on any database.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery } from 'kysely';
import { foldStatement } from './single-statement.ts';

const final = CompiledQuery.raw(`with b as (select * from t where id = $1 for update), u as (update t set name = $2 from b where t.id = b.id returning t.*) select u.* from u where atrium_require(true, 'it''s $1')`, ['id', 'name']);
const tail = CompiledQuery.raw('insert into audit (a, b) values ($1, $2)', ['a', 'b']);
const rider = CompiledQuery.raw(`select atrium_require(exists(select 1 from o where id = $1), 'tenancy') as held`, ['org']);

test('the final statement’s CTEs stay at the top level, the tail and its main query join them, the riders are the condition', () => {
  const folded = foldStatement(final, [tail], [rider])!;
  assert.equal(
    folded.sql,
    `with b as (select * from t where id = $1 for update), u as (update t set name = $2 from b where t.id = b.id returning t.*), ` +
      `atrium_tail_0 as (insert into audit (a, b) values ($3, $4)), ` +
      `atrium_main as materialized (select u.* from u where atrium_require(true, 'it''s $1')) ` +
      `select atrium_main.* from atrium_main where (select atrium_require(exists(select 1 from o where id = $5), 'tenancy') as held)`,
  );
  assert.deepEqual(folded.parameters, ['id', 'name', 'a', 'b', 'org']);
});

test('a read with a rider, a CTE with a column list, a statement without riders', () => {
  const read = CompiledQuery.raw('select "name" from "organisations" where "id" = $1', ['x']);
  assert.equal(foldStatement(read, [], [rider])!.sql, `with atrium_main as materialized (select "name" from "organisations" where "id" = $1) select atrium_main.* from atrium_main where (select atrium_require(exists(select 1 from o where id = $2), 'tenancy') as held)`);
  const listed = CompiledQuery.raw('with c (n) as (select 1), u as (update t set n = (select n from c) returning *) select * from u', []);
  assert.match(foldStatement(listed, [], [])!.sql, /^with c \(n\) as \(select 1\), u as \(update t set n = \(select n from c\) returning \*\), atrium_main as materialized \(select \* from u\) select atrium_main\.\* from atrium_main$/);
});

test('what it cannot take apart is not folded: comments, dollar quoting, an unbalanced with, a tail that is not an insert', () => {
  for (const sql of ['with u as (update t set a = 1 returning *) select * from u -- why', 'with u as (update t set a = $$x$$ returning *) select * from u', 'with u as (update t set a = 1 returning * select * from u', 'vacuum t']) {
    assert.equal(foldStatement(CompiledQuery.raw(sql, []), [], [rider]), undefined, sql);
  }
  assert.equal(foldStatement(final, [CompiledQuery.raw('update audit set a = $1', [1])], []), undefined);
});
