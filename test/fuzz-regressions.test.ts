// Cases the fuzz campaign (test/fuzz.test.ts) or the issue's own campaign found, kept as regression tests:
// each is the JSON fast-check printed as its counterexample, run through the same properties (`after`: a
// second case, where the first one's effect matters). Add a new one here first, watch it fail, then fix.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FuzzCase } from './support/fuzz-requests.ts';
import { startCampaign, type Campaign } from './support/fuzz-campaign.ts';

const regressions: Array<{ why: string; case: FuzzCase; after?: FuzzCase }> = [
  // Issue 14: the request fingerprint of an Idempotency-Key overflowed the stack on deep JSON (500).
  { why: 'deeply nested JSON in a free-form field with an Idempotency-Key', case: { operation: 'updateWikiPage', mutation: { kind: 'set', at: 2, value: { $deep: 200_000 } } } },
  { why: 'deeply nested JSON in a bulk item with its required Idempotency-Key', case: { operation: 'bulkLessonPages', mutation: { kind: 'set', at: 5, value: { $deep: 2_000 } } } },
  // Issue 14: NUL in a text field or an ext: id was a 500 on PostgreSQL.
  { why: 'a NUL character in a text field', case: { operation: 'createSection', mutation: { kind: 'set', at: 2, value: 'a\u0000b' } } },
  { why: 'a NUL character in an ext: id', case: { operation: 'getSectionByExternalId', mutation: { kind: 'segment', at: 1, value: 'ext:a%00b' } } },
  { why: 'a NUL character in an upserted ext: id', case: { operation: 'upsertCourseByExternalId', mutation: { kind: 'segment', at: 1, value: 'ext:%00' } } },
  { why: 'a NUL character in a query value', case: { operation: 'getEmailTemplateVersions', mutation: { kind: 'query', name: 'language', value: 'en%00' } } },
  // Issue 14: 415 with category validation, 414 with category quota, `__proto__` called malformed JSON.
  { why: 'a body that is not application/json', case: { operation: 'updateSection', mutation: { kind: 'content-type', value: 'text/plain' } } },
  { why: 'a body without a Content-Type', case: { operation: 'createCourse', mutation: { kind: 'content-type', value: null } } },
  { why: 'a path segment over the router limit', case: { operation: 'getSectionByExternalId', mutation: { kind: 'segment', at: 1, value: 'x'.repeat(1_100) } } },
  { why: 'a __proto__ key', case: { operation: 'createCategory', mutation: { kind: 'proto', key: '__proto__' } } },
  { why: 'a constructor key', case: { operation: 'createWebhookSubscription', mutation: { kind: 'proto', key: 'constructor' } } },
  // Campaign seed 4242 on PostgreSQL: a key reused for another operation is a 409 the OpenAPI document of
  // operations without a 409 of their own did not list.
  {
    why: 'an Idempotency-Key reused by another operation',
    case: { operation: 'createCourse', mutation: { kind: 'header', name: 'idempotency-key', value: 'k' } },
    after: { operation: 'uploadFile', mutation: { kind: 'header', name: 'idempotency-key', value: 'k' } },
  },
];

describe('fuzz regressions', () => {
  let campaign: Campaign;
  before(async () => {
    campaign = await startCampaign();
  });
  after(() => campaign.close());

  for (const { why, case: c, after: next } of regressions) {
    test(`${why}: ${JSON.stringify(c).slice(0, 160)}`, async () => {
      assert.deepEqual(await campaign.run(c), []);
      if (next) assert.deepEqual(await campaign.run(next), []);
    });
  }
});
