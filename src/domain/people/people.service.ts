import type { Db } from '../../db/database.ts';
import type { Clock } from '../../clock.ts';
import { newId } from '../../ids.ts';
import { isRoleName, type RoleName } from '../../auth/capabilities.ts';
import { hashPassword } from '../../auth/passwords.ts';
import { peopleRepository } from './people.repository.ts';

export class InvalidPersonRequest extends Error {}

export interface CreatePersonInput {
  organisationId: string;
  email: string;
  name: string;
  roles: string[];
  isPlatformAdmin?: boolean;
  password?: string;
}

export function createPeopleService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  return {
    async create(input: CreatePersonInput): Promise<{ id: string }> {
      const unknown = input.roles.filter((r) => !isRoleName(r));
      if (unknown.length > 0) throw new InvalidPersonRequest(`unknown roles: ${unknown.join(', ')}`);
      const email = input.email.trim().toLowerCase();
      if (!/^[^@\s]+@[^@\s]+$/.test(email)) throw new InvalidPersonRequest(`not an e-mail address: ${input.email}`);
      if (await peopleRepository.findByEmail(db, input.organisationId, email)) throw new InvalidPersonRequest(`a person with e-mail ${email} exists already`);
      const at = clock.now().toISOString();
      const id = newId();
      await peopleRepository.insert(db, {
        id,
        organisation_id: input.organisationId,
        email,
        name: input.name,
        password_hash: input.password ? await hashPassword(input.password) : null,
        roles: JSON.stringify(input.roles as RoleName[]),
        is_platform_admin: input.isPlatformAdmin ?? false,
        created_at: at,
        updated_at: at,
      });
      return { id };
    },
    findByEmail: (organisationId: string, email: string) => peopleRepository.findByEmail(db, organisationId, email.trim().toLowerCase()),
    findById: (organisationId: string, id: string) => peopleRepository.findById(db, organisationId, id),
  };
}

export type PeopleService = ReturnType<typeof createPeopleService>;
