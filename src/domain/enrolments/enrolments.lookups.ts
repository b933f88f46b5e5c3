// What an enrolment operation reads before it writes: the course, the person, the method, an existing
// enrolment (by id, by external id, or by person and method). A single request reads each with one query;
// a bulk request of up to 500 operations reads them all up front with one query per kind (prefetchedLookups),
// and then keeps its copy current with what its own operations write (`remember`). The database's unique
// indexes stay the guard against anything written meanwhile by another request.
import type { Db } from '../../db/database.ts';
import type { CourseRow } from '../courses/courses.repository.ts';
import { coursesRepository } from '../courses/courses.repository.ts';
import type { EnrolmentMethodRow } from '../enrolment-methods/enrolment-methods.repository.ts';
import { enrolmentMethodsRepository } from '../enrolment-methods/enrolment-methods.repository.ts';
import { enrolmentsRepository, type EnrolmentRow, type NamedInCreate } from './enrolments.repository.ts';

export interface EnrolmentLookups {
  course(id: string): Promise<Pick<CourseRow, 'id' | 'deleted_at'> | undefined>;
  /** A person of the organisation, removed ones included (`deleted_at` set). */
  person(id: string): Promise<{ id: string; deleted_at: string | null } | undefined>;
  method(id: string): Promise<Pick<EnrolmentMethodRow, 'id' | 'course_id' | 'status' | 'role' | 'deleted_at'> | undefined>;
  enrolment(id: string): Promise<EnrolmentRow | undefined>;
  byExternalId(externalId: string): Promise<EnrolmentRow | undefined>;
  /** Whether the person has a live enrolment through the method. */
  livePair(methodId: string, personId: string): Promise<boolean>;
  /** Told of each enrolment an operation wrote (created, changed or ended), once the operation succeeded. */
  remember(row: EnrolmentRow): void;
}

export function directLookups(db: Db, organisationId: string): EnrolmentLookups {
  return {
    course: async (id) => coursesRepository.findById(db, organisationId, id),
    person: (id) => enrolmentsRepository.person(db, organisationId, id),
    method: async (id) => enrolmentMethodsRepository.findById(db, organisationId, id),
    enrolment: async (id) => enrolmentsRepository.findById(db, organisationId, id),
    byExternalId: (externalId) => enrolmentsRepository.findByExternalId(db, organisationId, externalId),
    livePair: async (methodId, personId) => (await enrolmentsRepository.livePair(db, organisationId, methodId, personId)) !== undefined,
    remember: () => {},
  };
}

/** directLookups whose enrolment, read by id, is locked for this transaction's change (findByIdToChange). */
export function lockedLookups(db: Db, organisationId: string): EnrolmentLookups {
  return { ...directLookups(db, organisationId), enrolment: (id) => enrolmentsRepository.findByIdToChange(db, organisationId, id) };
}

/**
 * For one create: the course, the person and the method it names, and whether that person is enrolled through
 * that method, read in one query when the first of them is asked for (anything else as directLookups reads it).
 * A create so costs one round trip before its write instead of four.
 */
export function createLookups(db: Db, organisationId: string, named: { course_id: string; user_id: string; enrolment_method_id: string }): EnrolmentLookups {
  const direct = directLookups(db, organisationId);
  let read: Promise<NamedInCreate> | undefined;
  const known = () => (read ??= enrolmentsRepository.namedInCreate(db, organisationId, named.course_id, named.user_id, named.enrolment_method_id));
  return {
    ...direct,
    course: async (id) => (id === named.course_id ? (await known()).course : direct.course(id)),
    person: async (id) => (id === named.user_id ? (await known()).person : direct.person(id)),
    method: async (id) => (id === named.enrolment_method_id ? (await known()).method : direct.method(id)),
    livePair: async (methodId, personId) => (methodId === named.enrolment_method_id && personId === named.user_id ? (await known()).enrolled : direct.livePair(methodId, personId)),
  };
}

/** What a bulk request's operations name, as far as it can be known before they run. */
export interface NamedInBulk {
  enrolmentIds: ReadonlySet<string>;
  externalIds: ReadonlySet<string>;
  /**
   * What each create and upsert names to make an enrolment. An upsert's (with its external id) only matters
   * when no enrolment has that external id yet: otherwise the upsert creates nothing.
   */
  makes: Array<{ courseId?: string; personId?: string; methodId?: string; upsertExternalId?: string }>;
}

const pairKey = (methodId: string, personId: string) => `${methodId} ${personId}`;
const distinct = (values: Array<string | undefined>) => [...new Set(values.filter((v) => v !== undefined))];

/**
 * Everything `named` refers to, in two steps of one query per kind (run together): the enrolments named by id
 * and by external id; then the courses, people, methods and live (method, person) pairs of what would be made,
 * leaving out the upserts whose external id was found (a resend of a roster finds all, and reads no more).
 * Anything else falls back to a query of its own.
 */
export async function prefetchedLookups(db: Db, organisationId: string, named: NamedInBulk): Promise<EnrolmentLookups> {
  const direct = directLookups(db, organisationId);
  const [byId, byExternal] = await Promise.all([
    enrolmentsRepository.byIds(db, 'enrolments', organisationId, [...named.enrolmentIds]),
    enrolmentsRepository.byExternalIds(db, organisationId, [...named.externalIds]),
  ]);
  const enrolments = new Map<string, EnrolmentRow>();
  const external = new Map<string, EnrolmentRow>();
  const keep = (row: EnrolmentRow) => {
    enrolments.set(row.id, row);
    if (row.external_id !== null) external.set(row.external_id, row);
  };
  for (const row of byId as EnrolmentRow[]) keep(row);
  for (const row of byExternal) keep(row);
  // Every upsert's external id was asked for by external id: `external` holds those found.
  const made = named.makes.filter((m) => m.upsertExternalId === undefined || !external.has(m.upsertExternalId));
  const courseIds = distinct(made.map((m) => m.courseId));
  const personIds = distinct(made.map((m) => m.personId));
  const methodIds = distinct(made.map((m) => m.methodId));
  const wanted = made.flatMap((m) => (m.methodId !== undefined && m.personId !== undefined ? [[m.methodId, m.personId] as [string, string]] : []));
  const [courses, people, methods, livePairs] = await Promise.all([
    enrolmentsRepository.byIds(db, 'courses', organisationId, courseIds),
    enrolmentsRepository.byIds(db, 'people', organisationId, personIds),
    enrolmentsRepository.byIds(db, 'enrolment_methods', organisationId, methodIds),
    enrolmentsRepository.livePairs(db, organisationId, wanted),
  ]);
  const pairs = new Set<string>();
  for (const row of livePairs) pairs.add(pairKey(row.enrolment_method_id, row.person_id));
  const index = <R extends { id: string }>(rows: R[]) => new Map(rows.map((r) => [r.id, r]));
  const courseMap = index(courses as CourseRow[]);
  const personMap = index(people as Array<{ id: string; deleted_at: string | null }>);
  const methodMap = index(methods as EnrolmentMethodRow[]);
  const namedPairs = new Set(wanted.map(([m, p]) => pairKey(m, p)));
  // A name the prefetch covered answers from memory (found or not); any other goes to the database.
  const from = <R>(names: ReadonlySet<string>, map: Map<string, R>, fallback: (key: string) => Promise<R | undefined>) => (key: string) =>
    names.has(key) || map.has(key) ? Promise.resolve(map.get(key)) : fallback(key);
  return {
    course: from(new Set(courseIds), courseMap, direct.course),
    person: from(new Set(personIds), personMap, direct.person),
    method: from(new Set(methodIds), methodMap, direct.method),
    enrolment: from(named.enrolmentIds, enrolments, direct.enrolment),
    byExternalId: from(named.externalIds, external, direct.byExternalId),
    livePair: (methodId, personId) => {
      const key = pairKey(methodId, personId);
      return namedPairs.has(key) || pairs.has(key) ? Promise.resolve(pairs.has(key)) : direct.livePair(methodId, personId);
    },
    remember(row) {
      keep(row);
      const key = pairKey(row.enrolment_method_id, row.person_id);
      // Known from now on: the unique index allows one live enrolment per pair, and this is it or it ended.
      namedPairs.add(key);
      if (row.deleted_at === null) pairs.add(key);
      else pairs.delete(key);
    },
  };
}
