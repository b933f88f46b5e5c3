// Property-based suite: generated bad requests for every operation of the registry (a new operation is
// covered with no edit here), checked against the properties in test/support/fuzz-campaign.ts.
//
// `npm test` runs a bounded campaign with a fixed seed. `npm run fuzz` runs a long one with a random seed,
// printed first; replay any campaign with FUZZ_SEED (and FUZZ_RUNS, FUZZ_PATH from fast-check's report).
// FUZZ_TRACE=1 prints each case before it runs (to find one that hangs).
// A failing case becomes a regression test: fast-check prints the shrunk counterexample, a plain JSON
// `{"operation": …, "mutation": …}`; add it to test/fuzz-regressions.test.ts, then fix the code.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { operations } from '../src/all-operations.ts';
import { fuzzCase } from './support/fuzz-requests.ts';
import { startCampaign, type Campaign } from './support/fuzz-campaign.ts';

const long = process.env.FUZZ_CAMPAIGN === '1';
const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : long ? Math.floor(Math.random() * 2 ** 31) : 20261124;
const numRuns = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : long ? 5_000 : 400;
const path = process.env.FUZZ_PATH;
if (long) console.log(`fuzz campaign: FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns} (replay with these)`);

let campaign: Campaign;
before(async () => {
  campaign = await startCampaign();
});
after(() => campaign.close());

test(`generated bad requests over every operation hold the properties (seed ${seed}, ${numRuns} runs)`, { timeout: long ? Infinity : 120_000 }, async (t) => {
  t.diagnostic(`FUZZ_SEED=${seed} FUZZ_RUNS=${numRuns}${path ? ` FUZZ_PATH=${path}` : ''}`);
  const covered = new Set<string>();
  await fc.assert(
    fc.asyncProperty(fuzzCase(operations), async (c) => {
      covered.add(c.operation);
      if (process.env.FUZZ_TRACE) process.stderr.write(`${JSON.stringify(c).slice(0, 300)}\n`);
      const problems = await campaign.run(c);
      assert.deepEqual(problems, [], JSON.stringify(c));
    }),
    { seed, numRuns, ...(path ? { path } : {}), endOnFailure: !long },
  );
  if (numRuns >= operations.length * 4) assert.ok(covered.size >= operations.length * 0.9, `only ${covered.size} of ${operations.length} operations were tried`);
});
