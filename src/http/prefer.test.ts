// The `Prefer` header (RFC 7240) as the bulk endpoints read it: only a first `return=minimal` preference asks
// for the minimal answer; anything unknown or unreadable is ignored, never refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prefersMinimalReturn } from './prefer.ts';

test('return=minimal, however spelt, among other preferences and their parameters', () => {
  for (const header of [
    'return=minimal',
    'RETURN=MINIMAL',
    'Return = minimal',
    'return="minimal"',
    'respond-async, wait=100, return=minimal',
    'return=minimal; foo=bar; baz',
    'foo="a, return=representation; x", return=minimal',
    'return=minimal, return=representation',
    ['respond-async', 'return=minimal'],
  ]) {
    assert.equal(prefersMinimalReturn(header), true, JSON.stringify(header));
  }
});

test('absent, representation, unknown or malformed: not minimal (ignored, not refused)', () => {
  for (const header of [
    undefined,
    '',
    'return=representation',
    'return=representation, return=minimal',
    ['return=representation', 'return=minimal'],
    'return=minimalist',
    'return',
    'return=',
    'minimal',
    'handling=lenient; return=minimal',
    'return=mini mal',
    'return="minimal',
    'returns=minimal',
    '=;,,"',
  ]) {
    assert.equal(prefersMinimalReturn(header), false, JSON.stringify(header));
  }
});
