// Email messages (spec: operation 8 names them; docs/decisions.md#resources-the-specification-names-without-operations: list, read, create, update, delete besides bulk).
// Life cycle: draft → scheduled (needs send_at) → sending → sent; scheduled → draft or cancelled; draft →
// cancelled. `sending` and `sent` are the worker's to set (email-messages.sender.ts); sent and cancelled are
// final. The functions a bulk engine calls per item are create, update and upsertByExternalId.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { insertWithExternalId } from '../external-ids.ts';
import { foundOr404, newResourceRow } from '../resource-rows.ts';
import type { EmailMessageStatus } from '../../db/tables.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import type { Mailer } from '../../mail/mail.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { listPage, resourceList, type ListParams } from '../../operations/listing.ts';
import type { Audience, CreateEmailMessage, UpdateEmailMessage, UpsertEmailMessage } from './email-messages.schemas.ts';
import { batchedStore, directStore, type EmailMessageStore, type NamedInBulk } from './email-messages.store.ts';
import { emailMessagesRepository, recipientId, type EmailMessageRow, type PlainEmailMessageChanges, type StoredAudience } from './email-messages.repository.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';
import { createEmailMessageSender } from './email-messages.sender.ts';
import { describeSubject, toEmailMessageView, toRecipientView, type EmailMessageView, type RecipientView } from './email-messages.view.ts';

type AudienceInput = Static<typeof Audience>;
type Patch = Static<typeof UpdateEmailMessage>;

/** A message may be scheduled for a time this much in the past (clock skew, a request computed as "now"). */
export const SCHEDULE_GRACE_MS = 60_000;

const EARLIEST = Date.parse('1970-01-01T00:00:00Z');
const LATEST = Date.parse('9999-12-31T23:59:59.999Z');

/** RFC 3339 with any offset → UTC with `Z`, the one form stored (so that text comparison orders times on SQLite). */
function utc(value: string, pointer: string): string {
  const ms = Date.parse(value);
  if (Number.isNaN(ms) || ms < EARLIEST || ms > LATEST) throw fieldError(pointer, 'out_of_range', `\`${pointer.slice(1)}\` must be a time between 1970 and 9999.`);
  return new Date(ms).toISOString();
}

/** The audience in its one stored shape, checked for the fields each type takes (no database needed). */
function audienceShape(a: AudienceInput): StoredAudience {
  const notFor = (field: string, type: string) => fieldError(`/audience/${field}`, 'not_applicable', `\`${field}\` does not apply to a \`${type}\` audience.`);
  if (a.type === 'people') {
    if (a.course_id !== undefined) throw notFor('course_id', 'people');
    if (a.roles !== undefined) throw notFor('roles', 'people');
    if (a.person_ids === undefined) throw fieldError('/audience/person_ids', 'required', 'A `people` audience lists `person_ids`.');
    return { type: 'people', person_ids: a.person_ids };
  }
  if (a.person_ids !== undefined) throw notFor('person_ids', 'course');
  if (a.course_id === undefined) throw fieldError('/audience/course_id', 'required', 'A `course` audience names its `course_id`.');
  return a.roles === undefined ? { type: 'course', course_id: a.course_id } : { type: 'course', course_id: a.course_id, roles: a.roles };
}

/** The refusal for changing a message in this state, if it may not change. */
function stateConflict(row: EmailMessageRow): ApiError | undefined {
  if (row.deleted_at !== null) return new ApiError('email_message.deleted', `Email message ${row.id} was deleted at ${row.deleted_at}; it can no longer change.`);
  if (row.status === 'sending') return new ApiError('email_message.sending', `Email message ${row.id} is being sent; it cannot change now.`);
  if (row.status === 'sent') return new ApiError('email_message.sent', `Email message ${row.id} was sent at ${row.sent_at}; a sent message is final.`);
  if (row.status === 'cancelled') return new ApiError('email_message.cancelled', `Email message ${row.id} was cancelled; a cancelled message is final.`);
  return undefined;
}

function describeChange(before: EmailMessageRow, after: EmailMessageRow, fields: string[]): string {
  const subject = describeSubject(after.subject);
  if (after.status !== before.status) {
    const how = { scheduled: `scheduled for ${after.send_at}`, draft: 'unscheduled (back to draft)', cancelled: 'cancelled' }[after.status as 'scheduled' | 'draft' | 'cancelled'];
    return `Email message ${subject} ${how}.`;
  }
  return `Email message ${subject} changed: ${fields.join(', ')}.`;
}

export function createEmailMessageService(deps: { db: Db; clock: Clock; cursors: CursorCodec; events: EventRecorder; mail: Mailer }) {
  const { clock, cursors, events } = deps;
  const sender = createEmailMessageSender(deps);

  async function found(db: Db, organisationId: string, id: string): Promise<EmailMessageRow> {
    return foundOr404(emailMessagesRepository.findById(db, organisationId, id), 'email_message.not_found', `No email message ${id} in this organisation.`);
  }

  /** The message, locked for this change (emailMessagesRepository.findForChange): what is decided on it lands on it. */
  async function foundForChange(db: Db, organisationId: string, id: string): Promise<EmailMessageRow> {
    return foundOr404(emailMessagesRepository.findForChange(db, organisationId, id), 'email_message.not_found', `No email message ${id} in this organisation.`);
  }

  /** A scheduled message needs a send_at that has not passed (within SCHEDULE_GRACE_MS). */
  function checkSchedule(status: EmailMessageStatus, sendAt: string | null): void {
    if (status !== 'scheduled') return;
    if (sendAt === null) throw fieldError('/send_at', 'required', 'A scheduled message needs `send_at`; set `status` to `draft` to unschedule it.');
    if (Date.parse(sendAt) < clock.now().getTime() - SCHEDULE_GRACE_MS) {
      throw fieldError('/send_at', 'in_the_past', `\`send_at\` (${sendAt}) has passed; schedule the message for now or later.`);
    }
  }

  /** The people must be this organisation's; the course must exist here and not be deleted. */
  async function checkAudienceTargets(store: EmailMessageStore, audience: StoredAudience): Promise<void> {
    if (audience.type === 'people') {
      const known = await store.existingPeople(audience.person_ids);
      const missing = audience.person_ids.findIndex((id) => !known.has(id));
      if (missing >= 0) throw fieldError(`/audience/person_ids/${missing}`, 'not_found', `No person ${audience.person_ids[missing]} in this organisation.`);
      return;
    }
    const course = await store.course(audience.course_id);
    if (!course) throw fieldError('/audience/course_id', 'not_found', `No course ${audience.course_id} in this organisation.`);
    if (course.deleted_at !== null) throw new ApiError('course.deleted', `Course ${course.id} was deleted; its participants cannot be mailed through it.`);
  }

  const direct = (db: Db, organisationId: string) => directStore(db, organisationId, events);

  async function create(db: Db, organisationId: string, actorId: string, input: Static<typeof CreateEmailMessage>, store = direct(db, organisationId)): Promise<EmailMessageView> {
    const status = input.status ?? 'draft';
    if (status === 'cancelled') throw fieldError('/status', 'invalid_value', 'A new message is `draft` or `scheduled`.');
    const sendAt = input.send_at == null ? null : utc(input.send_at, '/send_at');
    checkSchedule(status, sendAt);
    const audience = audienceShape(input.audience);
    // One round trip (PostgreSQL, db/final-statement.ts): the message and its event go with the COMMIT, where the
    // audience's people or course are there (and the course live) and the external id is free; otherwise nothing
    // is made and the request runs again down here, which says why (422, 409). The checks above need no database.
    const offered = finalStatementOffered();
    if (!offered) await checkAudienceTargets(store, audience);
    const at = nowIso(clock);
    const row: EmailMessageRow = {
      ...newResourceRow(organisationId, input.external_id, at),
      subject: input.subject,
      body: JSON.stringify({ format: input.body.format, content: input.body.content }),
      audience: JSON.stringify(audience),
      send_at: sendAt,
      status,
      sent_at: null,
      recipients_total: null,
      recipients_sent: 0,
      recipients_failed: 0,
      claim_token: null,
      lease_until: null,
      created_by: actorId,
    };
    const when = status === 'scheduled' ? `, scheduled for ${sendAt}` : ' as a draft';
    const summary = `Email message ${describeSubject(row.subject)} created${when}.`;
    if (offered) return toEmailMessageView(await emailMessagesRepository.createInOneStatement(db, row, audience, summary));
    await insertWithExternalId((onClash) => store.insert(row, onClash), 'email message', input.external_id);
    await store.event('email_message.created', { id: row.id, summary });
    return toEmailMessageView(row);
  }

  /**
   * Partial update. A PATCH that changes nothing is a 200 with the message as it is, whatever its state (so
   * sending a message's own values again is harmless); any real change to a message that is sending, sent,
   * cancelled or deleted is a 409.
   */
  async function update(db: Db, organisationId: string, actorId: string, id: string, patch: Patch, store = direct(db, organisationId)): Promise<EmailMessageView> {
    void actorId; // The same call shape as create for the bulk engine; a change records no author.
    // One round trip (PostgreSQL, db/final-statement.ts) for a change whose rules are the message's state and
    // schedule: the change and its event go with the COMMIT, and a message not changed (absent, deleted, not a
    // draft or scheduled, a schedule in the past, already so) refuses it, so that the request runs again down
    // here. An audience (whose people or course are read) and a send_at refused as a time take this path at once.
    const plain = patch.audience === undefined && finalStatementOffered() ? plainChanges(patch) : undefined;
    if (plain) {
      const now = clock.now();
      return toEmailMessageView(await emailMessagesRepository.updateInOneStatement(db, organisationId, id, plain, now.toISOString(), new Date(now.getTime() - SCHEDULE_GRACE_MS).toISOString()));
    }
    const row = await foundOr404(store.forChange(id), 'email_message.not_found', `No email message ${id} in this organisation.`);
    const changes: Partial<EmailMessageRow> = {};
    if (patch.subject !== undefined && patch.subject !== row.subject) changes.subject = patch.subject;
    if (patch.body !== undefined) {
      const body = JSON.stringify({ format: patch.body.format, content: patch.body.content });
      if (body !== row.body) changes.body = body;
    }
    let audience: StoredAudience | undefined;
    if (patch.audience !== undefined) {
      audience = audienceShape(patch.audience);
      const text = JSON.stringify(audience);
      if (text !== row.audience) changes.audience = text;
    }
    if (patch.send_at !== undefined) {
      const sendAt = patch.send_at === null ? null : utc(patch.send_at, '/send_at');
      if (sendAt !== row.send_at) changes.send_at = sendAt;
    }
    if (patch.status !== undefined && patch.status !== row.status) changes.status = patch.status;
    const fields = Object.keys(changes);
    if (fields.length === 0) return toEmailMessageView(row);

    const conflict = stateConflict(row);
    if (conflict) throw conflict;
    const status = changes.status ?? row.status;
    if (changes.status !== undefined || changes.send_at !== undefined) checkSchedule(status, changes.send_at !== undefined ? changes.send_at : row.send_at);
    if (changes.audience !== undefined) await checkAudienceTargets(store, audience!);

    changes.updated_at = nowIso(clock);
    // The row is locked as read, so the change lands on it as decided.
    await store.update(row, changes);
    const updated: EmailMessageRow = { ...row, ...changes };
    await store.event('email_message.updated', { id, summary: describeChange(row, updated, fields) });
    return toEmailMessageView(updated);
  }

  /** The asked changes as stored, if there are some and none is refused before any read (send_at a valid time). */
  function plainChanges(patch: Patch): PlainEmailMessageChanges | undefined {
    let sendAt: string | null | undefined;
    try {
      sendAt = patch.send_at === undefined || patch.send_at === null ? patch.send_at : utc(patch.send_at, '/send_at');
    } catch {
      return undefined; // The full path answers 404 for an absent message before this 422.
    }
    const changes: PlainEmailMessageChanges = {
      subject: patch.subject,
      body: patch.body === undefined ? undefined : JSON.stringify({ format: patch.body.format, content: patch.body.content }),
      send_at: sendAt,
      status: patch.status,
    };
    return Object.values(changes).some((v) => v !== undefined) ? changes : undefined;
  }

  return {
    create,
    update,

    async get(db: Db, organisationId: string, id: string): Promise<EmailMessageView> {
      return toEmailMessageView(await found(db, organisationId, id));
    },

    list: resourceList(cursors, {
      list: 'email_messages',
      page: emailMessagesRepository.page,
      map: toEmailMessageView,
      filters: (params: ListParams & { status?: EmailMessageStatus }) => ({ status: params.status }),
    }),

    async getByExternalId(db: Db, organisationId: string, externalId: string): Promise<EmailMessageView> {
      return toEmailMessageView(await foundOr404(emailMessagesRepository.findByExternalId(db, organisationId, externalId), 'email_message.not_found', `No email message with external_id ${JSON.stringify(externalId)} in this organisation.`));
    },

    /** Creates (201) or updates (200) by external id; on update, fields left out keep their value. */
    async upsertByExternalId(db: Db, organisationId: string, actorId: string, externalId: string, input: Static<typeof UpsertEmailMessage>, store = direct(db, organisationId)) {
      const existing = await store.byExternalId(externalId);
      if (!existing) return { created: true, view: await create(db, organisationId, actorId, { ...input, external_id: externalId }, store) };
      return { created: false, view: await update(db, organisationId, actorId, existing.id, input, store) };
    },

    /** For a bulk request run in batch: what it names read up front, its writes queued (flushed by the bulk engine). */
    batch: (db: Db, organisationId: string, named: NamedInBulk) => batchedStore(db, organisationId, events, named),

    /**
     * Soft delete. Refused while the message is being sent. Deleting a scheduled message cancels it, so it
     * is never sent; a sent or cancelled one stays readable with its recipients.
     */
    async remove(db: Db, organisationId: string, id: string): Promise<void> {
      // One round trip (PostgreSQL, db/final-statement.ts): the delete (a scheduled message cancelled with it),
      // its tombstone and its event go with the COMMIT, and a message deleted or being sent refuses it, so that
      // the request runs again down here (404 or 409).
      if (finalStatementOffered()) return emailMessagesRepository.softDeleteInOneStatement(db, organisationId, id, nowIso(clock));
      const row = await foundForChange(db, organisationId, id);
      if (row.deleted_at !== null || row.status === 'sending') throw stateConflict(row)!;
      const at = nowIso(clock);
      const patch: Partial<EmailMessageRow> = { deleted_at: at, updated_at: at, ...(row.status === 'scheduled' ? { status: 'cancelled' as const } : {}) };
      // Deferred: the row is locked as read, so the delete lands on it as decided.
      await emailMessagesRepository.update(db, organisationId, id, patch);
      await deletionsRepository.record(db, organisationId, 'email_message', row, at);
      const cancelled = row.status === 'scheduled' ? ' (its scheduled sending cancelled)' : '';
      await events.record(db, organisationId, 'email_message.deleted', { id, summary: `Email message ${describeSubject(row.subject)} deleted${cancelled}.` });
    },

    /**
     * `GET /email_messages/{id}/recipients`: once sending has started, each recipient with its outcome; before
     * (a draft or scheduled message), whom the audience resolves to now, all `pending` — the same ids.
     */
    async recipients(db: Db, organisationId: string, id: string, params: { limit?: number; cursor?: string; outcome?: RecipientView['outcome'] }) {
      const row = await found(db, organisationId, id);
      const preview = row.deleted_at === null && (row.status === 'draft' || row.status === 'scheduled');
      return listPage(cursors, {
        list: 'email_message_recipients',
        organisationId,
        params: { limit: params.limit, cursor: params.cursor },
        filters: { email_message_id: id, outcome: params.outcome },
        async fetch(q): Promise<RecipientView[]> {
          const page = { afterPersonId: q.after?.[0], limit: q.limit + 1 };
          if (!preview) return emailMessagesRepository.recipients(db, organisationId, id, { ...page, outcome: params.outcome });
          if (params.outcome !== undefined && params.outcome !== 'pending') return [];
          const members = await emailMessagesRepository.audience(db, organisationId, JSON.parse(row.audience) as StoredAudience, page);
          return members.map((m) => ({ id: recipientId(id, m.person_id), person_id: m.person_id, address: m.address, outcome: 'pending' as const, error: null, sent_at: null }));
        },
        map: toRecipientView,
        position: (r) => [r.person_id],
      });
    },

    /** The worker's pass (src/jobs); tests call it directly with the time they want. */
    runDueMessages: sender.runDueMessages,
  };
}

export type EmailMessageService = ReturnType<typeof createEmailMessageService>;
