import { createAtriumClient } from '../clients/typescript/index.ts';

const atrium = createAtriumClient({
  baseUrl: process.env.ATRIUM_BASE_URL!, // https://school.example/api/v1
  apiKey: process.env.ATRIUM_API_KEY!, // atr_live_… (keep it out of source control)
  serviceVersion: '2026-11-01', // the revision this code was written against
});

// The sections of a course: the first page (pass `page.next_cursor` as `cursor` while `page.has_more`).
const list = await atrium.GET('/sections', { params: { query: { course_id: process.env.ATRIUM_COURSE_ID, limit: 50 } } });
if (list.error) throw new Error(`${list.error.code}: ${list.error.detail} (request ${list.error.request_id})`);
for (const section of list.data.data) console.log(`${section.id} ${section.title ?? '(untitled)'}`);

// Rename the first one (PATCH changes only the fields sent).
const first = list.data.data[0];
const renamed = await atrium.PATCH('/sections/{id}', {
  params: { path: { id: first.id } },
  body: { title: 'Week 1: Foundations' },
});
if (renamed.error) throw new Error(`${renamed.error.code}: ${renamed.error.detail}`);
console.log(`renamed to ${renamed.data.title}`);

// A refusal is a typed problem document: decide on `code`; `errors` points at each invalid field.
const refused = await atrium.PATCH('/sections/{id}', { params: { path: { id: first.id } }, body: { title: '' } });
if (refused.error?.code === 'validation.invalid_body') {
  for (const field of refused.error.errors ?? []) console.log(`refused ${field.path}: ${field.detail}`);
} else if (refused.error) {
  throw new Error(`unexpected ${refused.error.code}: ${refused.error.detail}`);
}
