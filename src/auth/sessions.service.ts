// Server-side sessions of signed-in people (docs/authentication.md#signing-in-and-the-admin-area). The cookie carries a random token; the
// database keeps its SHA-256, so ending a session (sign-out, a password change, removing the person) takes
// effect on the very next request of every server process. Idle timeout 2 hours, absolute 12 hours.
import { createHash, randomBytes } from 'node:crypto';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { createSecretBox } from '../crypto/secret-box.ts';
import { newId } from '../ids.ts';
import type { Capability } from '../access/capabilities.ts';
import { personCapabilities } from '../domain/roles/role-capabilities.ts';
import { peopleRepository } from '../domain/people/people.repository.ts';
import { sessionsRepository } from '../access/sessions.repository.ts';

export const SESSION_IDLE_MS = 2 * 3600_000;
export const SESSION_ABSOLUTE_MS = 12 * 3600_000;
/** last_seen_at is written at most this often, so that reading pages does not write on every request. */
const TOUCH_GRANULARITY_MS = 60_000;

export interface SignedInPerson {
  sessionId: string;
  organisationId: string;
  personId: string;
  email: string;
  name: string;
  roles: string[];
  isPlatformAdmin: boolean;
  capabilities: ReadonlySet<Capability>;
}

/** A message for the next page: a notice, and at most one secret shown once (docs/authentication.md#signing-in-and-the-admin-area). */
export interface Flash {
  notice?: string;
  error?: string;
  secret?: { label: string; value?: string; clientId?: string };
}

const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
// The flash is sealed with a key only the cookie holder has: a database copy cannot read a key shown once.
const flashBox = (token: string) => createSecretBox(`atrium-flash:${token}`);

export function createSessionService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  return {
    /** `tx`: the transaction that records the sign-in with it (audit log). */
    async start(organisationId: string, personId: string, tx: Db = db): Promise<{ token: string; id: string }> {
      const token = randomBytes(32).toString('base64url');
      const now = clock.now();
      const id = newId();
      // Starting a session is signing in (a password, an invitation): the person's last_sign_in_at.
      await peopleRepository.recordSignIn(tx, personId, now.toISOString());
      await sessionsRepository.insert(tx, {
        id,
        token_hash: hashToken(token),
        organisation_id: organisationId,
        person_id: personId,
        created_at: now.toISOString(),
        last_seen_at: now.toISOString(),
        expires_at: new Date(now.getTime() + SESSION_ABSOLUTE_MS).toISOString(),
        flash: null,
      });
      return { token, id };
    },

    /** The person a cookie's token signs in at this organisation, or undefined (unknown, ended, expired, elsewhere). */
    async resolve(token: string, organisationId: string): Promise<SignedInPerson | undefined> {
      const row = await sessionsRepository.findByTokenHash(db, hashToken(token));
      // docs/authentication.md#signing-in-and-the-admin-area: a session of one organisation means nothing at another's address.
      if (!row || row.organisation_id !== organisationId) return undefined;
      const now = clock.now().getTime();
      const lastSeen = Date.parse(row.last_seen_at);
      if (Date.parse(row.expires_at) <= now || lastSeen + SESSION_IDLE_MS <= now) {
        await sessionsRepository.delete(db, row.id);
        return undefined;
      }
      if (now - lastSeen >= TOUCH_GRANULARITY_MS) await sessionsRepository.touch(db, row.id, new Date(now).toISOString());
      const roles = JSON.parse(row.roles) as string[];
      return {
        sessionId: row.id,
        organisationId: row.organisation_id,
        personId: row.person_id,
        email: row.email,
        name: row.name,
        roles,
        isPlatformAdmin: Boolean(row.is_platform_admin),
        capabilities: await personCapabilities(db, row.organisation_id, row.roles, row.is_platform_admin),
      };
    },

    end: (sessionId: string, tx: Db = db) => sessionsRepository.delete(tx, sessionId),

    /** Every session of a person (password changed, person removed). */
    endAllOf: (tx: Db, personId: string) => sessionsRepository.deleteAllOf(tx, personId),

    setFlash: (sessionId: string, token: string, flash: Flash) => sessionsRepository.setFlash(db, sessionId, flashBox(token).seal(JSON.stringify(flash))),

    async takeFlash(sessionId: string, token: string): Promise<Flash | undefined> {
      const sealed = await sessionsRepository.takeFlash(db, sessionId);
      return sealed === null ? undefined : (JSON.parse(flashBox(token).open(sealed)) as Flash);
    },

    purgeExpired() {
      const now = clock.now().getTime();
      return sessionsRepository.deleteExpired(db, new Date(now).toISOString(), new Date(now - SESSION_IDLE_MS).toISOString());
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
