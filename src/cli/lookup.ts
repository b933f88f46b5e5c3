// Finding the organisation and person a command names, with messages that say what was not found.
import { normaliseAddress } from '../domain/organisations/organisations.service.ts';
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import type { Services } from '../services.ts';
import { ApiError } from '../errors/api-error.ts';

export const unknownOrganisation = (address: string): ApiError => new ApiError('tenancy.unknown_organisation', `no organisation at address ${normaliseAddress(address)}`);

export async function findOrganisation(services: Services, address: string): Promise<Organisation> {
  const org = await services.organisations.findByAddress(normaliseAddress(address));
  if (!org) throw unknownOrganisation(address);
  return org;
}

export async function findPerson(services: Services, org: Organisation, email: string): Promise<{ id: string; email: string }> {
  const person = await services.people.findByEmail(org.id, email);
  if (!person) throw new ApiError('user.not_found', `no person with e-mail ${email.trim().toLowerCase()} in organisation ${org.address}`);
  return person;
}
