// SQL of the sending worker. The worker serves every organisation, so finding due messages is the one query
// here not filtered by organisation; everything after it works on the claimed message's organisation.
import { sql } from 'kysely';
import { skipLockedForUpdate } from '../../db/claims.ts';
import type { Db } from '../../db/database.ts';
import type { RecipientOutcome } from '../../db/tables.ts';
import type { EmailMessageRow, RecipientRow } from './email-messages.repository.ts';

/** Scheduled messages whose time has come, and messages whose sending worker stopped renewing its claim. */
function dueQuery(db: Db, now: string) {
  return db
    .selectFrom('email_messages')
    .where('deleted_at', 'is', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'scheduled'), eb('send_at', '<=', now)]),
        eb.and([eb('status', '=', 'sending'), eb('lease_until', '<=', now)]),
      ]),
    );
}

const INSERT_CHUNK = 500;

export const deliveryRepository = {
  async anyDue(db: Db, now: string): Promise<boolean> {
    return (await dueQuery(db, now).select('id').limit(1).executeTakeFirst()) !== undefined;
  },

  /** Inside a transaction: the next due message, locked against other workers (skipped if one holds it). */
  lockNextDue(tx: Db, now: string): Promise<EmailMessageRow | undefined> {
    return skipLockedForUpdate(tx, dueQuery(tx, now).selectAll().orderBy('send_at').orderBy('id').limit(1)).executeTakeFirst();
  },

  /** Takes the message for one worker, if it is still as that worker read it. */
  async claim(tx: Db, row: EmailMessageRow, patch: Partial<EmailMessageRow>): Promise<boolean> {
    const result = await tx
      .updateTable('email_messages')
      .set(patch)
      .where('organisation_id', '=', row.organisation_id)
      .where('id', '=', row.id)
      .where('status', '=', row.status)
      .where('claim_token', 'is not distinct from', row.claim_token)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  async insertRecipients(tx: Db, rows: RecipientRow[]): Promise<void> {
    for (let i = 0; i < rows.length; i += INSERT_CHUNK) await tx.insertInto('email_message_recipients').values(rows.slice(i, i + INSERT_CHUNK)).execute();
  },

  /**
   * Recipients handed to the transport by a worker that stopped before recording the outcome: it may or may
   * not have gone out. They are failed, never sent again (a campaign must not reach anyone twice).
   */
  async failInDoubt(tx: Db, row: EmailMessageRow, error: string): Promise<number> {
    const result = await tx
      .updateTable('email_message_recipients')
      .set({ outcome: 'failed', error })
      .where('organisation_id', '=', row.organisation_id)
      .where('email_message_id', '=', row.id)
      .where('outcome', '=', 'pending')
      .where('attempted_at', 'is not', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  },

  /** Recipients not yet handed to the transport, in a stable order. */
  pending(db: Db, row: EmailMessageRow, limit: number): Promise<RecipientRow[]> {
    return db
      .selectFrom('email_message_recipients')
      .selectAll()
      .where('organisation_id', '=', row.organisation_id)
      .where('email_message_id', '=', row.id)
      .where('outcome', '=', 'pending')
      .where('attempted_at', 'is', null)
      .orderBy('person_id')
      .limit(limit)
      .execute();
  },

  /** Marks the attempt before sending; false when another worker marked it first (then it is theirs). */
  async markAttempt(db: Db, recipient: RecipientRow, at: string): Promise<boolean> {
    const result = await db
      .updateTable('email_message_recipients')
      .set({ attempted_at: at })
      .where('organisation_id', '=', recipient.organisation_id)
      .where('id', '=', recipient.id)
      .where('attempted_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Records a recipient's outcome and counts it on the message; false if the outcome was already settled. */
  async recordOutcome(tx: Db, recipient: RecipientRow, outcome: Exclude<RecipientOutcome, 'pending'>, error: string | null, at: string): Promise<boolean> {
    const result = await tx
      .updateTable('email_message_recipients')
      .set({ outcome, error, sent_at: outcome === 'sent' ? at : null })
      .where('organisation_id', '=', recipient.organisation_id)
      .where('id', '=', recipient.id)
      .where('outcome', '=', 'pending')
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) !== 1) return false;
    await tx
      .updateTable('email_messages')
      .set(outcome === 'sent' ? { recipients_sent: sql<number>`recipients_sent + 1` } : { recipients_failed: sql<number>`recipients_failed + 1` })
      .where('organisation_id', '=', recipient.organisation_id)
      .where('id', '=', recipient.email_message_id)
      .execute();
    return true;
  },

  async countFailed(tx: Db, row: EmailMessageRow, n: number): Promise<void> {
    if (n === 0) return;
    await tx
      .updateTable('email_messages')
      .set({ recipients_failed: sql<number>`recipients_failed + ${n}` })
      .where('organisation_id', '=', row.organisation_id)
      .where('id', '=', row.id)
      .execute();
  },

  /** Extends (or, with `until` = now, gives up) the claim; false when the claim is no longer this worker's. */
  async renewClaim(db: Db, row: EmailMessageRow, token: string, until: string): Promise<boolean> {
    const result = await db
      .updateTable('email_messages')
      .set({ lease_until: until })
      .where('organisation_id', '=', row.organisation_id)
      .where('id', '=', row.id)
      .where('status', '=', 'sending')
      .where('claim_token', '=', token)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  },

  /** Marks the message sent, if this worker's claim still holds; the row as it is then. */
  finish(tx: Db, row: EmailMessageRow, token: string, at: string): Promise<EmailMessageRow | undefined> {
    return tx
      .updateTable('email_messages')
      .set({ status: 'sent', sent_at: at, updated_at: at, claim_token: null, lease_until: null })
      .where('organisation_id', '=', row.organisation_id)
      .where('id', '=', row.id)
      .where('status', '=', 'sending')
      .where('claim_token', '=', token)
      .returningAll()
      .executeTakeFirst();
  },
};
