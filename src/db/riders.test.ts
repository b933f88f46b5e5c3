// A rider's outcome (riders.ts): made only when someone asks for it, the same whichever comes first, the check or
// the asking, and the first settlement kept. No database: a rider is settled with the rows (or the failure) its
// statement got, which is all the driver does with it.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { CompiledQuery } from 'kysely';
import { createRider } from './riders.ts';

const query = CompiledQuery.raw('select 1');
const mustBeOne = (rows: unknown[]) => {
  if (rows.length !== 1) throw new Error(`expected one row, got ${rows.length}`);
};

describe('a rider’s outcome', () => {
  test('a check that held before anyone asked: held, and the outcome resolves', async () => {
    const rider = createRider(query, mustBeOne);
    assert.equal(rider.held, undefined);
    rider.settle([{}]);
    assert.equal(rider.held, true);
    await rider.outcome;
    assert.equal(rider.outcome, rider.outcome, 'the same outcome each time it is asked for');
  });

  test('a check that failed before anyone asked: the outcome rejects with its error, for every later waiter', async () => {
    const rider = createRider(query, mustBeOne);
    rider.settle([]);
    assert.equal(rider.held, false);
    await assert.rejects(rider.outcome, /expected one row, got 0/);
    await assert.rejects(rider.outcome, /expected one row, got 0/);
  });

  test('asked for first, settled after: the waiter sees the check as it comes', async () => {
    const holds = createRider(query, mustBeOne);
    const waiting = holds.outcome;
    holds.settle([{}]);
    await waiting;
    const fails = createRider(query, mustBeOne);
    const refused = fails.outcome;
    fails.settle(new Error('connection lost'));
    await assert.rejects(refused, /connection lost/);
    assert.equal(fails.held, false);
  });

  test('an atomic rider’s failure is what `refused` makes of it, made once; a later settlement changes nothing', async () => {
    let made = 0;
    const rider = createRider(query, () => {}, {
      refused: () => {
        made++;
        return new Error('the premise no longer holds');
      },
    });
    assert.equal(rider.atomic, true);
    rider.settle(new Error('AT001'));
    rider.settle([{}]);
    rider.settle(new Error('AT001'));
    assert.equal(made, 1);
    assert.equal(rider.held, false);
    await assert.rejects(rider.outcome, /the premise no longer holds/);
  });

  test('a failure nobody waits for is not an unhandled rejection', async () => {
    const rider = createRider(query, mustBeOne);
    const outcome = rider.outcome;
    rider.settle([]);
    // Had the rejection gone unhandled, node:test would fail this file; give it a turn to.
    await new Promise((resolve) => setImmediate(resolve));
    await assert.rejects(outcome);
  });
});
