import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createCallRegistry } from './call-registry.ts';
const callFor = (requestId: string) => ({ requestId });

describe('the /mcp calls under way, by number (call-registry.ts)', () => {
  test('each call gets a number of its own, names it until it is closed, and nothing after', () => {
    const calls = createCallRegistry<{ requestId: string }>();
    const first = calls.open(callFor('req_1'));
    const second = calls.open(callFor('req_2'));
    assert.notEqual(first, second);
    assert.equal(typeof first, 'number', 'what the SDK carries keeps nothing of the call alive');
    assert.equal(calls.get(first).requestId, 'req_1');
    assert.equal(calls.get(second).requestId, 'req_2');
    calls.close(first);
    assert.throws(() => calls.get(first), /after the \/mcp request that carried it had ended/);
    assert.equal(calls.get(second).requestId, 'req_2');
    calls.close(second);
    assert.throws(() => calls.get(second));
  });

  test('a number the SDK did not get from it names nothing', () => {
    const calls = createCallRegistry<{ requestId: string }>();
    calls.open(callFor('req_1'));
    for (const key of [undefined, 'one', 0, 99]) assert.throws(() => calls.get(key));
  });
});
