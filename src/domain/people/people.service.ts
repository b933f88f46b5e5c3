import type { Db } from '../../db/database.ts';
import { type Clock, nowIso } from '../../clock.ts';
import { newId } from '../../ids.ts';
import { isRoleName, type RoleName } from '../../access/capabilities.ts';
import { hashPassword } from '../../crypto/passwords.ts';
import { sessionsRepository } from '../../access/sessions.repository.ts';
import { bumpCredentialEpoch } from '../../access/credential-epoch.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import { peopleRepository } from './people.repository.ts';
import type { EnrolmentService } from '../enrolments/enrolments.service.ts';
import { auditChange } from '../../audit/audit-log.ts';

export interface CreatePersonInput {
  organisationId: string;
  email: string;
  name: string;
  roles: string[];
  isPlatformAdmin?: boolean;
  password?: string;
}

/** Shortest password accepted (NIST SP 800-63B's minimum for a password chosen by its owner). */
export const MIN_PASSWORD_LENGTH = 8;

export function createPeopleService(deps: { db: Db; clock: Clock; enrolments: Pick<EnrolmentService, 'endEnrolmentsOfUser'> }) {
  const { db, clock, enrolments } = deps;

  function checkPassword(password: string): void {
    if ([...password].length < MIN_PASSWORD_LENGTH) throw fieldError('/password', 'too_short', `a password needs at least ${MIN_PASSWORD_LENGTH} characters`);
  }

  return {
    async create(input: CreatePersonInput): Promise<{ id: string }> {
      const unknown = input.roles.filter((r) => !isRoleName(r));
      if (unknown.length > 0) throw fieldError('/roles', 'invalid_value', `unknown roles: ${unknown.join(', ')}`);
      const email = input.email.trim().toLowerCase();
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw fieldError('/email', 'invalid_format', `not an e-mail address: ${input.email}`);
      if (input.password !== undefined) checkPassword(input.password);
      const existing = await peopleRepository.findByEmailEvenRemoved(db, input.organisationId, email);
      if (existing) throw new ApiError('user.email_taken', `a person with e-mail ${email} exists already${existing.deleted_at ? ' (removed)' : ''}`);
      // Hashed before the transaction: a transaction must not wait on scrypt.
      const passwordHash = input.password ? await hashPassword(input.password) : null;
      const at = nowIso(clock);
      const id = newId();
      await db.transaction().execute(async (tx) => {
        await peopleRepository.insert(tx, {
          id,
          organisation_id: input.organisationId,
          email,
          name: input.name,
          password_hash: passwordHash,
          roles: JSON.stringify(input.roles as RoleName[]),
          is_platform_admin: input.isPlatformAdmin ?? false,
          external_id: null,
          status: 'active',
          last_sign_in_at: null,
          created_at: at,
          updated_at: at,
          deleted_at: null,
        });
        // People have no events yet: a page's or a command's audit entry is written here.
        await auditChange(tx, input.organisationId, { type: 'user', id });
      });
      return { id };
    },

    /** A new password ends every session of the person at once (docs/authentication.md#signing-in-and-the-admin-area). */
    async setPassword(organisationId: string, personId: string, password: string): Promise<void> {
      checkPassword(password);
      const passwordHash = await hashPassword(password);
      await db.transaction().execute(async (tx) => {
        await peopleRepository.update(tx, organisationId, personId, { password_hash: passwordHash, updated_at: nowIso(clock) });
        await sessionsRepository.deleteAllOf(tx, personId);
        await auditChange(tx, organisationId, { type: 'user', id: personId });
      });
    },

    /**
     * The bare removal, without the rules of users.remove (src/domain/users/users.service.ts: yourself, the last
     * administrator, the tombstone and the event) that every path people use goes through. Removes a person: they sign in no more, and their sessions, API keys and OAuth tokens stop working on the
     * next request. The row stays (their wiki versions and messages still name them), with its e-mail address.
     */
    async remove(organisationId: string, personId: string): Promise<boolean> {
      return db.transaction().execute(async (tx) => {
        const at = nowIso(clock);
        const result = await peopleRepository.update(tx, organisationId, personId, { deleted_at: at, updated_at: at });
        await sessionsRepository.deleteAllOf(tx, personId);
        if (Number(result.numUpdatedRows) === 0) return false;
        // A removed person is a deleted user: their enrolments end with them, each with its event.
        await enrolments.endEnrolmentsOfUser(tx, organisationId, personId);
        // Every process's cached credentials of the organisation are checked again (src/auth/README.md).
        await bumpCredentialEpoch(tx, organisationId);
        await auditChange(tx, organisationId, { type: 'user', id: personId });
        return true;
      });
    },

    findByEmail: (organisationId: string, email: string) => peopleRepository.findByEmail(db, organisationId, email.trim().toLowerCase()),
    findById: (organisationId: string, id: string) => peopleRepository.findById(db, organisationId, id),
    list: (organisationId: string) => peopleRepository.list(db, organisationId),
  };
}

export type PeopleService = ReturnType<typeof createPeopleService>;
