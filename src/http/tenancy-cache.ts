// The organisations this process has served, by address, so that a request need not read its organisation
// before it starts: the read goes instead with the request's first statement, as its rider (src/db/riders.ts),
// and the request is answered only once that read agrees with the copy it started from. A change since (the
// credentials epoch moved, the plan or any setting changed: updated_at) fails the check, and the request
// starts over on the full path with the organisation as it is now (registry.ts), so a revoked credential, a
// removed person, a changed role or plan is still refused or applied on the very next request on every
// process. On PostgreSQL this saves the tenancy read its round trip (docs/decisions.md, "One round trip").
// The check is stated in SQL (the statement fails unless the organisation is still the copy), so that it may
// ride with a transaction's COMMIT too: a write that reads nothing first is then one round trip.
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import type { OrganisationService } from '../domain/organisations/organisations.service.ts';
import type { Db } from '../db/database-types.ts';
import { createRider, isPremiseFailure, sendRider, type Rider } from '../db/riders.ts';

const MAX_ENTRIES = 10_000;

/**
 * The organisation a request started from is not the one in the database; the request must read it again
 * (it may be gone from its address).
 */
export class StaleTenancy extends Error {
  constructor() {
    super('the organisation changed since this process cached it');
  }
}

/**
 * Whether the cached organisation a request started from has changed since: its rider's check, sent by itself if
 * nothing took it. Any other failure of the check (the database away) is thrown.
 */
export function turnedStale(db: Db, rider: Rider): Promise<boolean> {
  return sendRider(db, rider).then(
    () => false,
    (err: unknown) => {
      if (err instanceof StaleTenancy) return true;
      throw err;
    },
  );
}

export function createTenancyCache(organisations: Pick<OrganisationService, 'stillAsCachedQuery'>) {
  const byAddress = new Map<string, Organisation>();
  return {
    get: (address: string) => byAddress.get(address),
    set(address: string, organisation: Organisation): void {
      // Bounded simply: a full cache starts over.
      if (byAddress.size >= MAX_ENTRIES) byAddress.clear();
      byAddress.set(address, organisation);
    },
    /** The check a request that started from `cached` sends with its first statement, or its COMMIT. */
    riderFor(address: string, cached: Organisation): Rider {
      return createRider(
        organisations.stillAsCachedQuery(address, cached),
        () => {},
        {
          premise: 'tenancy',
          refused(failure) {
            if (!isPremiseFailure(failure)) return failure;
            // Whoever reads it next reads it from the database (pipeline.ts, readmit).
            if (byAddress.get(address) === cached) byAddress.delete(address);
            return new StaleTenancy();
          },
        },
      );
    },
  };
}

export type TenancyCache = ReturnType<typeof createTenancyCache>;
