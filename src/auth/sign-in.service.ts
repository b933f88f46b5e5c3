// Signing a person in with e-mail and password (docs/authentication.md#signing-in-and-the-admin-area). No oracle: an unknown e-mail, a person
// without a password and a wrong password take the same path (one scrypt verification) and the same answer.
import { hashPassword, verifyPassword } from '../crypto/passwords.ts';
import type { LoginAttempt, LoginThrottle } from './login-throttle.ts';
import type { PeopleService } from '../domain/people/people.service.ts';
import type { SessionService } from './sessions.service.ts';
import type { Db } from '../db/database.ts';
import { recordAudit, type AuditSource } from '../audit/audit-log.ts';

export type SignInResult =
  | { outcome: 'signed_in'; token: string; sessionId: string; personId: string }
  | { outcome: 'wrong_pair' }
  | { outcome: 'locked'; retryAfterSeconds: number };

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function createSignInService(deps: { db: Db; people: PeopleService; sessions: SessionService; throttle: LoginThrottle }) {
  const { db, people, sessions, throttle } = deps;
  // Verified against when there is no real hash, so that a wrong e-mail costs what a wrong password costs.
  let decoy: Promise<string> | undefined;
  const decoyHash = () => (decoy ??= hashPassword('decoy password that matches nothing'));

  return {
    /**
     * `source` is the request as the audit log names it. A refused attempt is recorded with no actor (nobody
     * proved who they are: naming the account's owner would let anyone write entries in their name) and, when
     * the e-mail is a person's, that person as its target; the e-mail typed is not recorded (it may be a
     * password typed into the wrong field). A sign-in is recorded with the session it starts. A locked-out
     * attempt (429) checks nothing and is not recorded.
     */
    async signIn(input: { organisationId: string; email: string; password: string; clientAddress: string; source: AuditSource }): Promise<SignInResult> {
      const refused = async (personId: string | null): Promise<SignInResult> => {
        const target = personId === null ? null : { type: 'user', id: personId };
        await recordAudit(db, { ...input.source, actor: { type: 'user', id: null, name: null }, credential: null, organisationId: input.organisationId, action: 'sign_in', target, outcome: 'refused', status: 401, changedFields: [] });
        return { outcome: 'wrong_pair' };
      };
      const attempt: LoginAttempt = { organisationId: input.organisationId, email: normaliseEmail(input.email), clientAddress: input.clientAddress };
      // No address or password holds NUL (PostgreSQL cannot even compare one): a wrong pair, at a wrong pair's cost.
      if (attempt.email.includes('\u0000') || input.password.includes('\u0000')) {
        await verifyPassword(input.password, await decoyHash());
        return refused(null);
      }
      const retryAfterSeconds = await throttle.retryAfter(attempt);
      if (retryAfterSeconds > 0) return { outcome: 'locked', retryAfterSeconds };
      const person = await people.findByEmail(input.organisationId, attempt.email);
      const hash = person?.password_hash ?? (await decoyHash());
      const matches = await verifyPassword(input.password, hash);
      // A suspended person's right pair is refused like a wrong one: the page tells nobody who is suspended.
      if (!person || person.password_hash === null || !matches || person.status !== 'active') {
        await throttle.recordFailure(attempt);
        return refused(person?.id ?? null);
      }
      await throttle.forgetEmailFailures(attempt);
      const session = await db.transaction().execute(async (tx) => {
        const started = await sessions.start(input.organisationId, person.id, tx);
        const actor = { type: 'user' as const, id: person.id, name: person.name };
        await recordAudit(tx, { ...input.source, actor, credential: { kind: 'session', id: started.id }, organisationId: input.organisationId, action: 'sign_in', target: { type: 'user', id: person.id }, outcome: 'success', status: 303, changedFields: [] });
        return started;
      });
      return { outcome: 'signed_in', token: session.token, sessionId: session.id, personId: person.id };
    },
  };
}

export type SignInService = ReturnType<typeof createSignInService>;
