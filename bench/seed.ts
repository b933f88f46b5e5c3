// The data every scenario works on, created through the real services (not SQL) so that it is exactly
// what the API itself would have written. A new scenario that needs more data adds it here.
import { scopes } from '../src/access/capabilities.ts';
import type { Db } from '../src/db/database.ts';
import { peopleRepository } from '../src/domain/people/people.repository.ts';
import { newId } from '../src/ids.ts';
import type { Services } from '../src/services.ts';
import type { ScaleFixture } from './scale-data.ts';

export interface Fixture {
  /** Host header to send: organisations are resolved by address, and the bench organisation is `localhost`. */
  host: string;
  organisationId: string;
  personId: string;
  /** Bearer token with every scope, held by an admin. */
  apiKey: string;
  /** A confidential client-credentials OAuth client acting as that admin, with every scope. */
  oauthClientId: string;
  oauthClientSecret: string;
  courseId: string;
  sectionId: string;
  /** The sections the spread PATCH scenario writes to, round robin. */
  spreadSectionIds: string[];
  /** Lesson activities of the bulk suite: bulk creates go to the first, raw inserts to the second, upserts to the third. */
  bulkLessonId: string;
  rawLessonId: string;
  upsertLessonId: string;
  /** External ids of existing pages of the upsert lesson, which the upsert scenario updates. */
  upsertExternalIds: string[];
  /** The scale suite's organisation, grown to each size by bench/scale-data.ts. */
  scale: ScaleFixture;
  /** The people the roster-sync suite enrols (bench/roster-scenarios.ts). */
  rosterPersonIds: string[];
}

/** How many pages the upsert scenario finds in place. */
export const UPSERT_PAGES = 500;
/** How many sections the spread PATCH scenario writes to. */
export const SPREAD_SECTIONS = 1000;
/** How many people the roster-sync suite enrols in each of its courses. */
export const ROSTER_PEOPLE = 2000;

export async function seed(services: Services, db: Db): Promise<Fixture> {
  const org = await services.organisations.create({ address: 'localhost', name: 'Benchmark organisation' });
  const person = await services.people.create({ organisationId: org.id, email: 'bench-admin@example.test', name: 'Benchmark admin', roles: ['admin'] });
  const key = await services.apiKeys.create({ organisationId: org.id, personId: person.id, name: 'benchmark', scopes: [...scopes] });
  const client = await services.oauthClients.create(org.id, person.id, { name: 'benchmark', type: 'confidential', redirect_uris: [], grant_types: ['client_credentials'], scopes: [...scopes] as never, service_person_id: person.id });
  const course = await services.courses.createCourse(db, org.id, { fullname: 'Benchmark course', shortname: 'BENCH-1' });
  const section = await services.sections.create(db, org.id, { course_id: course.id, title: 'Week 1', visible: true });
  const spreadCourse = await services.courses.createCourse(db, org.id, { fullname: 'Benchmark course, spread writes', shortname: 'BENCH-SPREAD' });
  const spreadSectionIds = await db.transaction().execute(async (tx) => {
    const ids: string[] = [];
    for (let i = 0; i < SPREAD_SECTIONS; i++) ids.push((await services.sections.create(tx, org.id, { course_id: spreadCourse.id, title: `Spread ${i}` })).id);
    return ids;
  });
  const lesson = (name: string) => services.activities.create(db, org.id, { course_id: course.id, type: 'lesson', name });
  const [bulkLesson, rawLesson, upsertLesson] = [await lesson('Bulk lesson'), await lesson('Raw lesson'), await lesson('Upsert lesson')];
  const upsertExternalIds = Array.from({ length: UPSERT_PAGES }, (_, i) => `bench-upsert-${i}`);
  await db.transaction().execute(async (tx) => {
    for (const [i, external_id] of upsertExternalIds.entries()) await services.lessonPages.create(tx, org.id, { lesson_id: upsertLesson.id, title: `Page ${i}`, external_id });
  });
  return {
    scale: await seedScaleOrganisation(services, db),
    rosterPersonIds: await seedRosterPeople(db, org.id),
    host: org.address,
    organisationId: org.id,
    personId: person.id,
    apiKey: key.key,
    oauthClientId: client.client_id,
    oauthClientSecret: client.client_secret!,
    courseId: course.id,
    sectionId: section.id,
    spreadSectionIds,
    bulkLessonId: bulkLesson.id,
    rawLessonId: rawLesson.id,
    upsertLessonId: upsertLesson.id,
    upsertExternalIds,
  };
}

/** An organisation of its own (so that its size changes no other scenario), with a course and a wiki page. */
async function seedScaleOrganisation(services: Services, db: Db): Promise<ScaleFixture> {
  const org = await services.organisations.create({ address: 'scale.localhost', name: 'Benchmark organisation at scale' });
  const person = await services.people.create({ organisationId: org.id, email: 'bench-scale@example.test', name: 'Scale admin', roles: ['admin'] });
  const key = await services.apiKeys.create({ organisationId: org.id, personId: person.id, name: 'benchmark at scale', scopes: [...scopes] });
  const course = await services.courses.createCourse(db, org.id, { fullname: 'Course at scale', shortname: 'SCALE-1' });
  const wiki = await services.activities.create(db, org.id, { course_id: course.id, type: 'wiki', name: 'Wiki at scale' });
  const page = await services.wikiPages.create(db, org.id, person.id, { activity_id: wiki.id, title: 'Scale page', body: { text: 'Edit 1' } });
  return { host: org.address, apiKey: key.key, organisationId: org.id, personId: person.id, courseId: course.id, wikiPageId: page.id };
}

/** The roster's people, inserted in one transaction (the bench measures enrolments, not people). */
async function seedRosterPeople(db: Db, organisationId: string): Promise<string[]> {
  return db.transaction().execute(async (tx) => {
    const ids: string[] = [];
    const at = new Date().toISOString();
    for (let i = 0; i < ROSTER_PEOPLE; i++) {
      const id = newId();
      ids.push(id);
      await peopleRepository.insert(tx, { id, organisation_id: organisationId, email: `student-${i}@roster.example.test`, name: `Student ${i}`, password_hash: null, roles: '[]', is_platform_admin: false, external_id: null, status: 'active', last_sign_in_at: null, created_at: at, updated_at: at, deleted_at: null });
    }
    return ids;
  });
}
