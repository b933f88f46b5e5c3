import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { until } from '../../test/support/wait.ts';
import { startWorker, type Job } from './worker.ts';

const tick = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('worker loop', () => {
  test('runs each named job again after its interval; a failing pass is logged and retried, the others go on', async () => {
    const runs = { steady: 0, flaky: 0 };
    const errors: Array<{ job: string; message: string }> = [];
    const jobs: Job[] = [
      { name: 'test.steady', intervalMs: 5, run: async () => void runs.steady++ },
      {
        name: 'test.flaky',
        intervalMs: 5,
        run: async () => {
          runs.flaky++;
          throw new Error(`failure ${runs.flaky}`);
        },
      },
    ];
    const worker = startWorker(jobs, { info() {}, error: (o, _msg) => errors.push({ job: (o as { job: string }).job, message: ((o as { err: Error }).err).message }) });
    await until(() => runs.steady >= 3 && runs.flaky >= 3, 'three runs of each job');
    await worker.stop();
    assert.ok(runs.steady >= 3, `steady ran ${runs.steady} times`);
    assert.ok(runs.flaky >= 3, `flaky ran ${runs.flaky} times`);
    assert.deepEqual(errors[0], { job: 'test.flaky', message: 'failure 1' });
    assert.equal(errors.length, runs.flaky);
  });

  test('stop() aborts the signal, waits for the pass in progress, and runs nothing after', async () => {
    let inProgress = false;
    let finished = 0;
    let sawAbort = false;
    const job: Job = {
      name: 'test.slow',
      intervalMs: 1,
      async run(signal) {
        inProgress = true;
        while (!signal.aborted) await tick(2);
        sawAbort = true;
        await tick(10); // finishing the current item
        inProgress = false;
        finished++;
      },
    };
    const worker = startWorker([job], { info() {}, error() {} });
    await until(() => inProgress, 'the first pass');
    assert.equal(inProgress, true);
    await worker.stop();
    assert.deepEqual([inProgress, sawAbort, finished], [false, true, 1]);
    await tick(20);
    assert.equal(finished, 1);
  });

  test('a job that keeps failing (its database away) backs off, doubling from 100 ms, and recovers by itself', async () => {
    const starts: number[] = [];
    let healthy = false;
    const job: Job = {
      name: 'test.outage',
      intervalMs: 1,
      async run() {
        starts.push(performance.now());
        if (!healthy) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      },
    };
    const logged: object[] = [];
    const worker = startWorker([job], { info() {}, error: (o) => logged.push(o) });
    try {
      await until(() => starts.length >= 4, 'four failed passes');
      healthy = true;
      const failed = starts.length;
      await until(() => starts.length >= failed + 3, 'passes after the outage');
    } finally {
      await worker.stop();
    }
    const gaps = starts.slice(1, 4).map((at, i) => at - starts[i]);
    for (const [i, gap] of gaps.entries()) assert.ok(gap >= 100 * 2 ** i - 5, `gap ${i} was ${gap} ms`);
    // No stack in the log for a database that is away: what failed, and when the job tries again.
    assert.deepEqual(logged[0], { error: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:5432', job: 'test.outage', failures: 1, retryInMs: 100 });
  });
});
