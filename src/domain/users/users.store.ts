// What a user operation reads and writes, two ways with the same rules (users.service.ts decides): at once (a
// single request, a bulk request's operations run one by one), or from what a bulk request read up front, its
// writes queued in the batch (domain/bulk/batch-writes.ts) and written with the other operations' in a few
// statements. The database's unique keys stay the guard against anything another request wrote meanwhile: the
// batch's INSERT or UPDATE then fails, and the engine runs the operations one by one.
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { EventType } from '../../events/catalog.ts';
import type { EventData, EventRecorder } from '../../events/outbox.ts';
import { ApiError } from '../../errors/api-error.ts';
import type { BatchWrites } from '../bulk/batch-writes.ts';
import type { BulkItem } from '../bulk/bulk-engine.ts';
import { customRoleCapabilities } from '../roles/role-capabilities.ts';
import { usersRepository, type UserRow } from './users.repository.ts';
import type { MaybeAsync } from '../../maybe-async.ts';

export interface UserStore {
  byId(id: string): Promise<UserRow | undefined>;
  byExternalId(externalId: string): Promise<UserRow | undefined>;
  /** Any person with this address (stored in lower case), removed ones included. */
  byEmail(email: string): Promise<UserRow | undefined>;
  /** The capabilities of the organisation's custom roles among `keys`. */
  customRoles(keys: readonly string[]): Promise<Map<string, string[]>>;
  /** A new person; a unique key taken is the error `taken` makes for it. */
  insert(row: UserRow, taken: KeysTaken): Promise<void>;
  /** Sets columns of a live person the operation read. */
  update(row: UserRow, set: Partial<UserRow>): Promise<void>;
  event(type: EventType, data: EventData): MaybeAsync<unknown>;
}

/** The 409s of a person's unique keys a caller controls. */
export interface KeysTaken {
  address(): ApiError;
  externalId(): ApiError;
}

/** A unique violation of the address's key (PostgreSQL names the constraint, SQLite the columns); else it is the external id's. */
function isAddressClash(err: unknown): boolean {
  const e = err as { constraint?: string; message?: string };
  return e.constraint === 'people_org_email_unique' || /people\.email\b/.test(e.message ?? '');
}

type UserReads = Pick<UserStore, 'byId' | 'byExternalId' | 'byEmail' | 'customRoles'>;

const directReads = (db: Db, organisationId: string): UserReads => ({
  byId: async (id) => usersRepository.findById(db, organisationId, id),
  byExternalId: (externalId) => usersRepository.findByExternalId(db, organisationId, externalId),
  byEmail: (email) => usersRepository.findByEmail(db, organisationId, email),
  customRoles: (keys) => customRoleCapabilities(db, organisationId, keys),
});

export function directUserStore(db: Db, organisationId: string, events: EventRecorder): UserStore {
  return {
    ...directReads(db, organisationId),
    // A deferred write (db/deferred-writes.ts): nobody reads its result; its failure surfaces as the 409.
    insert: (row, taken) => usersRepository.insert(db, row, (err) => (!isUniqueViolation(err) ? err : isAddressClash(err) ? taken.address() : taken.externalId())),
    update: (row, set) => usersRepository.update(db, organisationId, row.id, set),
    event: (type, data) => events.record(db, organisationId, type, data),
  };
}

/** What a bulk request's operations name: ids, external ids, addresses (as stored) and role keys. */
export interface NamedInUsersBulk {
  ids: Set<string>;
  externalIds: Set<string>;
  emails: Set<string>;
  roleKeys: Set<string>;
}

export function namedInUsersBulk(items: readonly BulkItem[], normaliseEmail: (email: string) => string): NamedInUsersBulk {
  const named: NamedInUsersBulk = { ids: new Set(), externalIds: new Set(), emails: new Set(), roleKeys: new Set() };
  for (const item of items) {
    const data = (item.data ?? {}) as { email?: unknown; roles?: unknown; external_id?: unknown };
    if (typeof item.id === 'string') named.ids.add(item.id);
    if (typeof item.external_id === 'string') named.externalIds.add(item.external_id);
    if (typeof data.external_id === 'string') named.externalIds.add(data.external_id);
    if (typeof data.email === 'string') named.emails.add(normaliseEmail(data.email));
    if (Array.isArray(data.roles)) for (const key of data.roles) if (typeof key === 'string') named.roleKeys.add(key);
  }
  return named;
}

/**
 * The store of a batch: the people `named` read up front (`rows`), kept current with what the batch's operations
 * write, and the custom roles it names; a name outside `named` is read at once. Writes go to `writes`.
 */
export function batchedUserStore(db: Db, organisationId: string, named: NamedInUsersBulk, rows: UserRow[], customRoles: Map<string, string[]>, writes: BatchWrites): UserStore {
  const direct = directReads(db, organisationId);
  const byId = new Map<string, UserRow>();
  const byExternalId = new Map<string, UserRow>();
  const byEmail = new Map<string, UserRow>();
  const keep = (row: UserRow) => {
    byId.set(row.id, row);
    if (row.external_id !== null) byExternalId.set(row.external_id, row);
    byEmail.set(row.email, row);
  };
  rows.forEach(keep);
  const known = (names: ReadonlySet<string>, map: Map<string, UserRow>, read: (key: string) => Promise<UserRow | undefined>) => (key: string) =>
    names.has(key) || map.has(key) ? Promise.resolve(map.get(key)) : read(key);
  const store: UserStore = {
    byId: known(named.ids, byId, direct.byId),
    byExternalId: known(named.externalIds, byExternalId, direct.byExternalId),
    byEmail: known(named.emails, byEmail, direct.byEmail),
    customRoles: async (keys) => (keys.every((k) => named.roleKeys.has(k)) ? new Map(keys.flatMap((k) => (customRoles.has(k) ? [[k, customRoles.get(k)!] as const] : []))) : direct.customRoles(keys)),
    async insert(row, taken) {
      // The database would refuse it only at the batch's end: the key the batch knows is checked here (the
      // address was, by the service).
      if (row.external_id !== null && (await store.byExternalId(row.external_id))) throw taken.externalId();
      writes.insert('people', row);
      keep(row);
    },
    async update(row, set) {
      writes.update('people', organisationId, row.id, set);
      // An address given up is free for a later operation of the batch (whose INSERT, written before the batch's
      // UPDATEs, then meets the unique key: the engine runs the operations one by one, in order).
      if (set.email !== undefined && byEmail.get(row.email)?.id === row.id) byEmail.delete(row.email);
      keep({ ...row, ...set });
    },
    async event(type, data) {
      writes.event(organisationId, type, data);
    },
  };
  return store;
}
