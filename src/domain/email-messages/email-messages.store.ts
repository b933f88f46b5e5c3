// What an email message's create, change and upsert read and write, two ways with the same rules: at once (a
// single request, or a bulk request's operations run one by one), or from what a bulk request read up front, its
// writes queued in a batch (domain/bulk/batch-writes.ts) and written with the other operations' in a few
// statements, so that its round trips do not grow with its operations. The service decides; these only read and
// write.
import type { Db } from '../../db/database.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventData, EventRecorder } from '../../events/outbox.ts';
import type { FailureTranslation } from '../../db/deferred-writes.ts';
import { BatchWrites } from '../bulk/batch-writes.ts';
import { coursesRepository } from '../courses/courses.repository.ts';
import { externalIdTaken } from '../external-ids.ts';
import { emailMessagesRepository, type EmailMessageRow } from './email-messages.repository.ts';
import type { MaybeAsync } from '../../maybe-async.ts';

export interface EmailMessageStore {
  course(id: string): Promise<{ id: string; deleted_at: string | null } | undefined>;
  /** The ids among `ids` that are people of the organisation. */
  existingPeople(ids: string[]): Promise<Set<string>>;
  byExternalId(externalId: string): Promise<EmailMessageRow | undefined>;
  /** The message, locked for a change (emailMessagesRepository.findForChange). */
  forChange(id: string): Promise<EmailMessageRow | undefined>;
  /** A new message; an external id taken is `onClash`'s 409. */
  insert(row: EmailMessageRow, onClash: FailureTranslation): Promise<void>;
  /** Sets columns of a message read for change (so they land as decided). */
  update(row: EmailMessageRow, changes: Partial<EmailMessageRow>): Promise<void>;
  event(type: EventType, data: EventData): MaybeAsync<unknown>;
}

export function directStore(db: Db, organisationId: string, events: EventRecorder): EmailMessageStore {
  return {
    course: async (id) => coursesRepository.findById(db, organisationId, id),
    existingPeople: (ids) => emailMessagesRepository.existingPeople(db, organisationId, ids),
    byExternalId: (externalId) => emailMessagesRepository.findByExternalId(db, organisationId, externalId),
    forChange: (id) => emailMessagesRepository.findForChange(db, organisationId, id),
    insert: (row, onClash) => emailMessagesRepository.insert(db, row, onClash),
    // Deferred (db/deferred-writes.ts): the row is locked as read.
    update: (row, changes) => emailMessagesRepository.update(db, organisationId, row.id, changes),
    event: (type, data) => events.record(db, organisationId, type, data),
  };
}

/** What a bulk request's operations name: the external ids they create or upsert, the courses and people of their audiences. */
export interface NamedInBulk {
  externalIds: ReadonlySet<string>;
  courseIds: ReadonlySet<string>;
  personIds: ReadonlySet<string>;
}

/**
 * A bulk request's store: the messages of every external id it names (locked), the courses and the people its
 * audiences name, read up front in one round trip; anything else read as `directStore` reads it. Its writes are
 * queued in `writes`, and what they wrote is remembered, so that a later operation sees it. The database's unique
 * index stays the guard against an external id taken meanwhile by another request: the batch's INSERT then
 * fails, and the engine runs the operations one by one.
 */
export async function batchedStore(db: Db, organisationId: string, events: EventRecorder, named: NamedInBulk): Promise<{ store: EmailMessageStore; writes: BatchWrites }> {
  const direct = directStore(db, organisationId, events);
  const [messages, courses, people] = await Promise.all([
    emailMessagesRepository.byExternalIdsForChange(db, organisationId, [...named.externalIds]),
    emailMessagesRepository.courses(db, organisationId, [...named.courseIds]),
    emailMessagesRepository.existingPeople(db, organisationId, [...named.personIds]),
  ]);
  const courseMap = new Map(courses.map((c) => [c.id, c]));
  // The messages known, as read or as this request's operations left them: by id, and the id of each external id.
  const byId = new Map(messages.map((m) => [m.id, m]));
  const idOfExternal = new Map(messages.map((m) => [m.external_id!, m.id]));
  const remember = (row: EmailMessageRow) => {
    byId.set(row.id, row);
    if (row.external_id !== null) idOfExternal.set(row.external_id, row.id);
  };
  const byExternal = (externalId: string) => byId.get(idOfExternal.get(externalId) ?? '');
  const { externalIds: namedExternal, courseIds: namedCourses, personIds: namedPeople } = named;
  const writes = new BatchWrites(events);
  const store: EmailMessageStore = {
    course: (id) => (namedCourses.has(id) ? Promise.resolve(courseMap.get(id)) : direct.course(id)),
    existingPeople: (ids) => (ids.every((id) => namedPeople.has(id)) ? Promise.resolve(new Set(ids.filter((id) => people.has(id)))) : direct.existingPeople(ids)),
    byExternalId: (externalId) => (namedExternal.has(externalId) || idOfExternal.has(externalId) ? Promise.resolve(byExternal(externalId)) : direct.byExternalId(externalId)),
    forChange: (id) => (byId.has(id) ? Promise.resolve(byId.get(id)) : direct.forChange(id)),
    async insert(row) {
      if (row.external_id !== null && (await store.byExternalId(row.external_id))) throw externalIdTaken('email message', row.external_id);
      writes.insert('email_messages', row);
      remember(row);
    },
    async update(row, changes) {
      writes.update('email_messages', organisationId, row.id, changes);
      remember({ ...row, ...changes });
    },
    async event(type, data) {
      writes.event(organisationId, type, data);
    },
  };
  return { store, writes };
}
