// What node-postgres costs the service per statement, not per round trip (bench/README.md, "Where things
// stand", 2026-11-28 evening): the same write (an update returning its row, an insert, a check) sent three ways
// from 10 pipelined connections, client CPU per transaction and PostgreSQL's transactions a second:
// - five: BEGIN, the check, the update, the insert, COMMIT in one socket write (what the driver sends for a PATCH);
// - batch: the three statements with one Sync and no BEGIN/COMMIT, one implicit transaction (a Query subclass);
// - one: a single statement doing all of it with CTEs, atomic by itself.
// On its own tables in a schema of its own, dropped at the end.
//
//   node bench/pg-statement-shapes.ts            # BENCH_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test
import { createRequire } from 'node:module';
import pg from 'pg';

const require = createRequire(import.meta.url);
const Query = require('pg/lib/query.js') as new (config: { text: string }) => object;
const Result = require('pg/lib/result.js') as new (rowMode: undefined, types: unknown) => { addFields(f: unknown): void; parseRow(f: unknown): unknown; addRow(r: unknown): void; addCommandComplete(m: unknown): void };
const { prepareValue } = require('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown };

interface Statement {
  name: string;
  text: string;
  values: unknown[];
}

type Wire = Record<string, (...args: any[]) => void> & { parsedStatements: Record<string, string> };

/** Statements in one implicit transaction: Parse (once per connection), Bind, Describe, Execute each; one Sync. */
class Batch extends Query {
  readonly done: Promise<void>;
  #resolve!: () => void;
  #reject!: (err: unknown) => void;
  #failed = false;
  #current = 0;
  readonly #results: Array<InstanceType<typeof Result>> = [];
  readonly statements: Statement[];
  readonly types: unknown;
  constructor(statements: Statement[], types: unknown) {
    super({ text: 'batch' });
    this.statements = statements;
    this.types = types;
    this.done = new Promise((resolve, reject) => ((this.#resolve = resolve), (this.#reject = reject)));
  }
  submit(connection: Wire) {
    for (const s of this.statements) {
      if (connection.parsedStatements[s.name] === undefined) connection.parse({ text: s.text, name: s.name });
      connection.parsedStatements[s.name] = s.text;
      connection.bind({ portal: '', statement: s.name, values: s.values, valueMapper: prepareValue });
      connection.describe({ type: 'P', name: '' });
      connection.execute({ portal: '', rows: 0 });
      this.#results.push(new Result(undefined, this.types));
    }
    connection.sync();
    return null;
  }
  handleRowDescription(msg: { fields: unknown }) {
    this.#results[this.#current].addFields(msg.fields);
  }
  handleDataRow(msg: { fields: unknown }) {
    const result = this.#results[this.#current];
    result.addRow(result.parseRow(msg.fields));
  }
  handleCommandComplete(msg: unknown) {
    this.#results[this.#current++].addCommandComplete(msg);
  }
  handleError(err: unknown) {
    this.#failed = true;
    this.#reject(err);
  }
  handleReadyForQuery() {
    if (!this.#failed) this.#resolve();
  }
  handleEmptyQuery() {}
  handlePortalSuspended() {}
}

const url = process.env.BENCH_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const schema = `bench_shapes_${process.pid}`;
const options = { connectionString: url, options: `-c search_path=${schema}` };
const setup = new pg.Client(options);
await setup.connect();
await setup.query(`create schema ${schema}`);
await setup.query('create table t (id int primary key, title text, updated_at timestamptz); create table e (id bigserial primary key, data text)');
await setup.query(`insert into t select g, 'x', now() from generate_series(1, 1000) g`);
const clients = await Promise.all(
  Array.from({ length: 10 }, async () => {
    const client = new pg.Client({ ...options, pipeline: true } as pg.ClientConfig);
    await client.connect();
    return client as pg.Client & { connection: { stream: import('node:net').Socket }; _types: unknown };
  }),
);

let n = 0;
const check: Statement = { name: 'check', text: 'select $1::int as held', values: [1] };
const update = (id: number): Statement => ({ name: 'update', text: 'update t set title = $1, updated_at = now() where id = $2 returning *', values: [`t${n}`, id] });
const insert: Statement = { name: 'insert', text: 'insert into e (data) values ($1)', values: ['{"a":1}'] };
const shapes: Record<string, (client: (typeof clients)[number]) => Promise<unknown>> = {
  five(client) {
    const id = (n++ % 1000) + 1;
    client.connection.stream.cork();
    const sent = [client.query('begin'), client.query(check), client.query(update(id)), client.query(insert), client.query('commit')];
    client.connection.stream.uncork();
    return Promise.all(sent);
  },
  batch(client) {
    const batch = new Batch([check, update((n++ % 1000) + 1), insert], client._types);
    client.query(batch as never);
    return batch.done;
  },
  one(client) {
    const id = (n++ % 1000) + 1;
    const text = 'with r as (select $1::int as held), u as (update t set title = $2, updated_at = now() where id = $3 returning *), w as (insert into e (data) select $4 from u) select u.* from u, r';
    return client.query({ name: 'one', text, values: [1, `t${n}`, id, '{"a":1}'] });
  },
};

const TRANSACTIONS = 4000;
for (let round = 1; round <= 2; round++) {
  for (const [name, send] of Object.entries(shapes)) {
    let started = 0;
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(clients.map(async (client) => { while (started++ < TRANSACTIONS) await send(client); }));
    const used = process.cpuUsage(cpu);
    const seconds = (performance.now() - t0) / 1000;
    process.stdout.write(`round ${round} ${name.padEnd(5)} client CPU ${((used.user + used.system) / TRANSACTIONS).toFixed(1).padStart(6)} µs/transaction, ${(TRANSACTIONS / seconds).toFixed(0).padStart(6)} transactions/s\n`);
  }
}
for (const client of clients) await client.end();
await setup.query(`drop schema ${schema} cascade`);
await setup.end();
