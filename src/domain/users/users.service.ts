// Users (docs/api-guide.md#users-roles-and-the-organisation): the organisation's people as the /users API, the /admin/people page and
// `atrium person` see them. Every path calls these functions, so the same rules hold everywhere: e-mail
// addresses unique in any letter case, nobody removes or suspends themselves or the last active administrator,
// and roles are given only by someone allowed to (scope `roles:write`, capability `role/assign`) and never
// allow more than that person may do. What ends someone's access (removal, suspension, a change of roles) ends
// their sessions and bumps the credentials epoch in the same transaction (src/auth/credential-epoch.ts).
import { externalIdTaken } from '../external-ids.ts';
import type { EnrolmentService } from '../enrolments/enrolments.service.ts';
import { createHash, randomBytes } from 'node:crypto';
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { newId } from '../../ids.ts';
import { foundOr404, newResourceRow } from '../resource-rows.ts';
import { isRoleName, roles as builtInRoles, type Capability } from '../../access/capabilities.ts';
import type { Actor } from '../../access/actor.ts';
import { bumpCredentialEpoch } from '../../access/credential-epoch.ts';
import { hashPassword } from '../../crypto/passwords.ts';
import { sessionsRepository } from '../../access/sessions.repository.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import type { CursorCodec } from '../../operations/pagination.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import type { Mailer } from '../../mail/mail.ts';
import { MailDeliveryError } from '../../mail/mail.ts';
import { publicOrigin, type PublicOriginSettings } from '../../public-origin.ts';
import { deletionsRepository } from '../deletions/deletions.repository.ts';
import { resourceList, type ListParams } from '../../operations/listing.ts';
import { organisationsRepository } from '../organisations/organisations.repository.ts';
import { MIN_PASSWORD_LENGTH } from '../people/people.service.ts';
import { customRoleCapabilities } from '../roles/role-capabilities.ts';
import type { CreateUser, UpdateUser, UpsertUser, User } from './users.schemas.ts';
import { usersRepository, type RoleGrantPremise, type UserRow } from './users.repository.ts';
import { batchedUserStore, directUserStore, namedInUsersBulk, type UserStore } from './users.store.ts';
import type { BatchWrites } from '../bulk/batch-writes.ts';
import type { BulkItem } from '../bulk/bulk-engine.ts';
import { finalStatementOffered } from '../../db/final-statement.ts';

export type UserView = Static<typeof User>;

/** An invitation link is good once, for 72 hours. */
export const INVITATION_TTL_MS = 72 * 3600_000;

/**
 * Who makes a change, and what bounds them: a credential's person, scopes and capabilities (REST, MCP); a
 * signed-in person, not limited by scopes (admin pages); or the CLI, run by whoever operates the deployment
 * (no person, no bounds: `null`).
 */
export interface Authority {
  personId: string | null;
  scopes: ReadonlySet<string> | null;
  capabilities: ReadonlySet<Capability> | null;
}

export const authorityOf = (actor: Actor): Authority => ({ personId: actor.personId, scopes: actor.scopes, capabilities: actor.capabilities });
export const operatorAuthority: Authority = { personId: null, scopes: null, capabilities: null };

export const normaliseEmail = (email: string) => email.trim().toLowerCase();
const hashToken = (token: string) => createHash('sha256').update(token).digest('hex');
const rolesOf = (row: UserRow) => JSON.parse(row.roles) as string[];
const isActiveAdmin = (row: UserRow) => row.deleted_at === null && row.status === 'active' && rolesOf(row).includes('admin');

export function toUserView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    roles: rolesOf(row),
    status: row.status,
    platform_admin: Boolean(row.is_platform_admin),
    external_id: row.external_id,
    last_sign_in_at: row.last_sign_in_at,
    created_at: row.created_at,
    updated_at: row.updated_at,
    deleted_at: row.deleted_at,
  };
}

function emailTaken(email: string, byRemoved: boolean): ApiError {
  const detail = `Another user of this organisation${byRemoved ? ' (removed)' : ''} has the e-mail address ${email}.`;
  return new ApiError('user.email_taken', detail, { errors: [{ path: '/email', code: 'taken', detail }] });
}

export type InvitationState = { state: 'valid'; personId: string; email: string; name: string } | { state: 'gone' };

export function createUserService(deps: { clock: Clock; cursors: CursorCodec; events: EventRecorder; db: Db; mail: Mailer; publicOrigin: PublicOriginSettings; enrolments: Pick<EnrolmentService, 'endEnrolmentsOfUser'> }) {
  const { clock, cursors, events } = deps;

  async function find(db: Db, organisationId: string, id: string): Promise<UserRow> {
    return foundOr404(usersRepository.findById(db, organisationId, id), 'user.not_found', `No user ${id} in this organisation.`);
  }

  function liveRow(row: UserRow): UserRow {
    if (row.deleted_at !== null) throw new ApiError('user.deleted', `User ${row.id} was removed at ${row.deleted_at}; it can no longer change.`);
    return row;
  }

  async function live(db: Db, organisationId: string, id: string): Promise<UserRow> {
    return liveRow(await find(db, organisationId, id));
  }

  async function checkEmailFree(store: UserStore, email: string, selfId?: string): Promise<void> {
    const other = await store.byEmail(email);
    if (other && other.id !== selfId) throw emailTaken(email, other.deleted_at !== null);
  }

  /**
   * Giving or taking roles: the scope `roles:write` and the capability `role/assign`, every key a role of the
   * organisation (422 at its pointer), and no role given that allows something the giver may not do.
   */
  async function checkRoleChange(store: UserStore, by: Authority, current: string[], next: string[]): Promise<void> {
    const added = next.filter((r) => !current.includes(r));
    if (added.length === 0 && current.every((r) => next.includes(r))) return;
    checkMayAssign(by);
    const custom = await store.customRoles(added);
    for (const [i, key] of next.entries()) {
      if (added.includes(key) && !isRoleName(key) && !custom.has(key)) throw fieldError(`/roles/${i}`, 'unknown_role', `No role ${key} in this organisation (GET /roles lists them).`);
    }
    if (!by.capabilities) return;
    for (const key of added) {
      const lacking = lackingToGive(by.capabilities, isRoleName(key) ? builtInRoles[key] : (custom.get(key) as readonly string[]));
      if (lacking.length > 0) {
        throw new ApiError('auth.missing_capability', `The role ${key} allows ${lacking.map((c) => `\`${c}\``).join(', ')}, which you do not have yourself; you cannot give it.`);
      }
    }
  }

  /** What a role allows that the giver (`capabilities`) may not do: a role is given only where this is empty. */
  const lackingToGive = (capabilities: ReadonlySet<Capability>, allowed: readonly string[]) => allowed.filter((c) => !capabilities.has(c as Capability));

  /** The refusals of a role change that need no database: the scope `roles:write` and the capability `role/assign`. */
  function checkMayAssign(by: Authority): void {
    if (by.scopes && !by.scopes.has('roles:write')) {
      throw new ApiError('auth.insufficient_scope', 'Setting or changing roles also needs the scope `roles:write`, which the credential was not granted.');
    }
    if (by.capabilities && !by.capabilities.has('role/assign')) {
      throw new ApiError('auth.missing_capability', 'Setting or changing roles needs the capability `role/assign`, which you do not have in this organisation.');
    }
  }

  /**
   * A new person's roles checked as the one-statement create checks them: the refusals that need no database
   * here, and each custom role given as a premise of the statement (there, and allowing nothing the giver may not
   * do); undefined when the request must take its full path at once, which refuses in its own order (a built-in
   * role the giver may not give comes after an unknown custom role's 422 there).
   */
  function rolesAsPremises(by: Authority, roles: string[]): RoleGrantPremise[] | undefined {
    if (roles.length === 0) return [];
    checkMayAssign(by);
    const { capabilities } = by;
    if (capabilities && roles.some((key) => isRoleName(key) && lackingToGive(capabilities, builtInRoles[key]).length > 0)) return undefined;
    return roles.filter((key) => !isRoleName(key)).map((key) => ({ key, within: by.capabilities === null ? null : [...by.capabilities] }));
  }

  /** Nobody removes or suspends themselves, and the organisation keeps one active administrator. */
  async function checkLeaving(db: Db, organisationId: string, by: Authority, row: UserRow, what: 'remove' | 'suspend' | 'take the admin role from'): Promise<void> {
    if (what !== 'take the admin role from' && by.personId === row.id) throw new ApiError('user.self', `You cannot ${what} yourself.`);
    if (isActiveAdmin(row) && (await usersRepository.otherActiveAdmins(db, organisationId, row.id)) === 0) {
      throw new ApiError('user.last_admin', `${row.email} is the last active administrator of this organisation; give another person the admin role first.`);
    }
  }

  /** What ends a person's access now: their sessions, and every process's cached credentials of the organisation. */
  async function endAccess(db: Db, organisationId: string, personId: string): Promise<void> {
    await sessionsRepository.deleteAllOf(db, personId);
    await bumpCredentialEpoch(db, organisationId);
  }

  /** Reads and writes at once, in `db` (users.store.ts). */
  const direct = (db: Db, organisationId: string) => directUserStore(db, organisationId, events);

  /**
   * `operator`: what only the CLI sets (a platform administrator, a first password, already hashed). `store`: a
   * bulk batch's (users.store.ts).
   */
  async function create(
    db: Db,
    organisationId: string,
    by: Authority,
    input: Static<typeof CreateUser>,
    operator: { isPlatformAdmin?: boolean; passwordHash?: string } = {},
    store: UserStore = direct(db, organisationId),
  ): Promise<UserView> {
    const email = normaliseEmail(input.email);
    const roles = input.roles ?? [];
    // One round trip (PostgreSQL, db/final-statement.ts): the person and their event go with the COMMIT, the
    // address and the custom roles given not read first; an address or external id taken, a custom role not there
    // or allowing more than the giver may do, makes nothing and refuses it, so that the request runs again down
    // here, where the 409 says who holds the address and the 422 or 403 which role.
    const premises = finalStatementOffered() ? rolesAsPremises(by, roles) : undefined;
    const offered = premises !== undefined;
    if (!offered) await checkRoleChange(store, by, [], roles);
    if (!offered) await checkEmailFree(store, email);
    const at = nowIso(clock);
    const row: UserRow = {
      ...newResourceRow(organisationId, input.external_id, at),
      email,
      name: input.name,
      password_hash: operator.passwordHash ?? null,
      roles: JSON.stringify(roles),
      is_platform_admin: operator.isPlatformAdmin ?? false,
      status: input.status ?? 'active',
      last_sign_in_at: null,
    };
    if (offered) return toUserView(await usersRepository.createInOneStatement(db, row, premises));
    // Its unique keys: the address, read free above (so taken meanwhile by a request at the same time, by a live
    // person), and the external id.
    await store.insert(row, { address: () => emailTaken(email, false), externalId: () => externalIdTaken('user', input.external_id) });
    await store.event('user.created', { id: row.id, summary: `User ${JSON.stringify(row.name)} added.` });
    return toUserView(row);
  }

  /** The columns `patch` would change in `row` (normalised), before any check; empty when it changes nothing. */
  function changesOf(row: UserRow, patch: Static<typeof UpdateUser>): Partial<UserRow> {
    const changes: Partial<UserRow> = {};
    if (patch.name !== undefined && patch.name !== row.name) changes.name = patch.name;
    if (patch.email !== undefined && normaliseEmail(patch.email) !== row.email) changes.email = normaliseEmail(patch.email);
    if (patch.roles !== undefined && JSON.stringify(patch.roles) !== row.roles) changes.roles = JSON.stringify(patch.roles);
    if (patch.status !== undefined && patch.status !== row.status) changes.status = patch.status;
    return changes;
  }

  /**
   * Partial update of a live person. A patch that changes nothing is not an update: no write, no event, and
   * updated_at and the changes-since feed stay put (`changed: false`).
   */
  async function applyPatch(db: Db, organisationId: string, by: Authority, row: UserRow, patch: Static<typeof UpdateUser>, store: UserStore): Promise<{ changed: boolean; view: UserView }> {
    const changes = changesOf(row, patch);
    if (changes.email !== undefined) await checkEmailFree(store, changes.email, row.id);
    if (patch.roles !== undefined) {
      // Checked even when the roles stay (as a set they then need nothing); a new order alone is a change.
      const current = rolesOf(row);
      await checkRoleChange(store, by, current, patch.roles);
      if (current.includes('admin') && !patch.roles.includes('admin')) await checkLeaving(db, organisationId, by, row, 'take the admin role from');
    }
    if (changes.status === 'suspended') await checkLeaving(db, organisationId, by, row, 'suspend');
    if (Object.keys(changes).length === 0) return { changed: false, view: toUserView(row) };
    const updated: UserRow = { ...row, ...changes, updated_at: nowIso(clock) };
    await store.update(row, { ...changes, updated_at: updated.updated_at });
    // Not in a bulk batch, which takes no such change (batch below).
    if (changes.status === 'suspended') await endAccess(db, organisationId, row.id);
    // Roles, or coming back from suspension, change what cached credentials may do.
    else if (changes.roles !== undefined || changes.status !== undefined) await bumpCredentialEpoch(db, organisationId);
    await store.event('user.updated', { id: row.id, summary: `User ${JSON.stringify(updated.name)} changed (${Object.keys(changes).join(', ')}).` });
    return { changed: true, view: toUserView(updated) };
  }

  async function update(db: Db, organisationId: string, by: Authority, id: string, patch: Static<typeof UpdateUser>, store?: UserStore): Promise<UserView> {
    // One round trip (PostgreSQL, db/final-statement.ts): a change of name, address or status and its event go
    // with the COMMIT; a person not changed (absent, removed, already so, the address taken, an administrator
    // suspended) refuses it, so that the request runs again down here. Roles, and suspending oneself, always
    // take this path: their checks read the organisation's roles, or refuse at once.
    if (store === undefined && finalStatementOffered() && patch.roles === undefined && (patch.name !== undefined || patch.email !== undefined || patch.status !== undefined) && !(patch.status === 'suspended' && by.personId === id)) {
      const asked = { name: patch.name, email: patch.email === undefined ? undefined : normaliseEmail(patch.email), status: patch.status };
      return toUserView(await usersRepository.updateInOneStatement(db, organisationId, id, asked, nowIso(clock)));
    }
    const reads = store ?? direct(db, organisationId);
    const row = liveRow(await foundOr404(reads.byId(id), 'user.not_found', `No user ${id} in this organisation.`));
    return (await applyPatch(db, organisationId, by, row, patch, reads)).view;
  }

  async function remove(db: Db, organisationId: string, by: Authority, id: string): Promise<void> {
    // One round trip (PostgreSQL, db/final-statement.ts): the removal and all it ends go with the COMMIT; a person
    // absent, removed or an active administrator refuses it, so that the request runs again down here (404, 409,
    // or the last-administrator rule under the organisation's lock). Removing oneself always comes down here.
    // With an Idempotency-Key, on PostgreSQL: the same statement, which says whether it removed the person; if
    // not, the request goes on down here in its transaction.
    if (by.personId !== id) {
      if (finalStatementOffered()) return usersRepository.removeInOneStatement(db, organisationId, id, nowIso(clock));
      if (await usersRepository.removeAtOnce(db, organisationId, id, nowIso(clock))) return;
    }
    const row = await live(db, organisationId, id);
    await checkLeaving(db, organisationId, by, row, 'remove');
    const at = nowIso(clock);
    await usersRepository.update(db, organisationId, id, { deleted_at: at, updated_at: at });
    await endAccess(db, organisationId, id);
    // Their enrolments end with them, in this transaction, each with its own enrolment.deleted event.
    await deps.enrolments.endEnrolmentsOfUser(db, organisationId, id);
    await deletionsRepository.record(db, organisationId, 'user', row, at);
    await events.record(db, organisationId, 'user.deleted', { id, summary: `User ${JSON.stringify(row.name)} removed.` });
  }

  return {
    create,
    update,
    remove,

    get: (db: Db, organisationId: string, id: string) => find(db, organisationId, id).then(toUserView),

    async getByExternalId(db: Db, organisationId: string, externalId: string, store: UserStore = direct(db, organisationId)): Promise<UserView> {
      return toUserView(await foundOr404(store.byExternalId(externalId), 'user.not_found', `No user with external_id ${JSON.stringify(externalId)} in this organisation.`));
    },

    /**
     * A bulk request's store for a batch run (domain/bulk/bulk-engine.ts): the people its operations name, read
     * in one query, and the custom roles they name in another; or undefined when an operation needs what only
     * the one-by-one path does: a delete, an external id two operations name, a change of an existing person's
     * roles or status (the epoch's bump, the end of sessions, the last-administrator rule read under the
     * organisation's lock).
     */
    async batch(db: Db, organisationId: string, items: readonly BulkItem[], writes: BatchWrites): Promise<UserStore | undefined> {
      if (items.some((item) => item.op === 'delete')) return undefined;
      const perOperation = items.map((item) => new Set([item.external_id, item.data?.external_id].filter((e): e is string => typeof e === 'string')));
      if (new Set(perOperation.flatMap((ids) => [...ids])).size !== perOperation.reduce((n, ids) => n + ids.size, 0)) return undefined;
      const named = namedInUsersBulk(items, normaliseEmail);
      const [rows, customRoles] = await Promise.all([
        usersRepository.named(db, organisationId, { ids: [...named.ids], externalIds: [...named.externalIds], emails: [...named.emails] }),
        customRoleCapabilities(db, organisationId, [...named.roleKeys]),
      ]);
      for (const item of items) {
        const data = item.data as { roles?: unknown; status?: unknown } | undefined;
        if ((item.op !== 'update' && item.op !== 'upsert') || data === undefined) continue;
        const existing = rows.find((r) => (item.id !== undefined ? r.id === item.id : r.external_id === item.external_id));
        if (existing === undefined || existing.deleted_at !== null) continue;
        if (data.roles !== undefined && JSON.stringify(data.roles) !== existing.roles) return undefined;
        if (data.status !== undefined && data.status !== existing.status) return undefined;
      }
      return batchedUserStore(db, organisationId, named, rows, customRoles, writes);
    },

    async findByEmail(db: Db, organisationId: string, email: string): Promise<UserView | undefined> {
      const row = await usersRepository.findByEmail(db, organisationId, normaliseEmail(email));
      return row && toUserView(row);
    },

    list: resourceList(cursors, {
      list: 'users',
      page: usersRepository.page,
      map: toUserView,
      filters: (params: ListParams & { status?: string; role?: string; email?: string }) => ({
        status: params.status,
        role: params.role,
        email: params.email === undefined ? undefined : normaliseEmail(params.email),
      }),
    }),

    /** Created (201), changed (200), or found already as asked (200, `changed: false`: nothing written, no event). */
    async upsertByExternalId(
      db: Db,
      organisationId: string,
      by: Authority,
      externalId: string,
      input: Static<typeof UpsertUser>,
      store: UserStore = direct(db, organisationId),
    ): Promise<{ created: boolean; changed: boolean; view: UserView }> {
      const existing = await store.byExternalId(externalId);
      if (!existing) return { created: true, changed: true, view: await create(db, organisationId, by, { ...input, external_id: externalId }, {}, store) };
      const { changed, view } = await applyPatch(db, organisationId, by, liveRow(existing), input, store);
      return { created: false, changed, view };
    },

    /**
     * Reads only: the upsert's outcome when it would write nothing (the person exists, not removed, already as
     * `input` says: then no check can refuse it either), otherwise undefined. A bulk resend answers this way
     * without a savepoint.
     */
    async unchangedUpsert(db: Db, organisationId: string, externalId: string, input: Static<typeof UpsertUser>): Promise<{ created: false; changed: false; view: UserView } | undefined> {
      const existing = await usersRepository.findByExternalId(db, organisationId, externalId);
      if (!existing || existing.deleted_at !== null || Object.keys(changesOf(existing, input)).length > 0) return undefined;
      return { created: false, changed: false, view: toUserView(existing) };
    },

    /**
     * The mail of `POST /users/{id}/actions/invite`, sent before the request's transaction opens (a mail
     * server must not hold the database): a one-time link whose token only the mail holds. `recordInvitation`
     * then stores its hash; if that fails, the link leads to the 410 page.
     */
    async sendInvitation(db: Db, organisationId: string, id: string): Promise<{ tokenHash: string; expiresAt: string }> {
      const row = await live(db, organisationId, id);
      const org = (await organisationsRepository.findById(db, organisationId))!;
      const token = randomBytes(32).toString('base64url');
      const expiresAt = new Date(clock.now().getTime() + INVITATION_TTL_MS).toISOString();
      const link = `${publicOrigin(deps.publicOrigin, org.address)}/invitations/${token}`;
      try {
        await deps.mail.send({
          organisationId,
          to: { name: row.name, address: row.email },
          subject: `Your account at ${org.name}`,
          text: `Hello ${row.name},\n\nyou have an account at ${org.name}. Choose your password here (the link works once, for 72 hours):\n\n${link}\n\nThen sign in with ${row.email}.`,
        });
      } catch (err) {
        if (err instanceof MailDeliveryError) throw new ApiError('mail.unavailable', `The invitation could not be mailed: ${err.detail}`, { retryAfter: 60 });
        throw err;
      }
      return { tokenHash: hashToken(token), expiresAt };
    },

    async recordInvitation(db: Db, organisationId: string, id: string, sent: { tokenHash: string; expiresAt: string }): Promise<{ id: string; expires_at: string }> {
      const row = await live(db, organisationId, id);
      const invitationId = newId();
      await usersRepository.insertInvitation(db, { id: invitationId, organisation_id: organisationId, person_id: id, token_hash: sent.tokenHash, created_at: nowIso(clock), expires_at: sent.expiresAt, used_at: null });
      await events.record(db, organisationId, 'user.invited', { id, summary: `User ${JSON.stringify(row.name)} invited to choose a password.` });
      return { id: invitationId, expires_at: sent.expiresAt };
    },

    /** Whether a link's token is good here and now: unused, unexpired, of this organisation, for a live, active person. */
    async invitation(organisationId: string, token: string): Promise<InvitationState> {
      const inv = await usersRepository.findInvitation(deps.db, hashToken(token));
      if (!inv || inv.organisation_id !== organisationId || inv.used_at !== null || Date.parse(inv.expires_at) <= clock.now().getTime()) return { state: 'gone' };
      const person = await usersRepository.findById(deps.db, organisationId, inv.person_id);
      if (!person || person.deleted_at !== null || person.status !== 'active') return { state: 'gone' };
      return { state: 'valid', personId: person.id, email: person.email, name: person.name };
    },

    /**
     * Uses the link: sets the password and uses up the token in one transaction (a second use, even a
     * concurrent one, finds it used). Returns the person to sign in, 'gone', or the password's problem.
     */
    async acceptInvitation(organisationId: string, token: string, password: string): Promise<{ personId: string } | 'gone' | 'too_short'> {
      const state = await this.invitation(organisationId, token);
      if (state.state === 'gone') return 'gone';
      if ([...password].length < MIN_PASSWORD_LENGTH) return 'too_short';
      const passwordHash = await hashPassword(password);
      return deps.db.transaction().execute(async (tx) => {
        const inv = (await usersRepository.findInvitation(tx, hashToken(token)))!;
        const at = nowIso(clock);
        if (!(await usersRepository.useInvitation(tx, inv.id, at))) return 'gone' as const;
        await usersRepository.update(tx, organisationId, state.personId, { password_hash: passwordHash, updated_at: at });
        // A password set anew ends any session the person had.
        await sessionsRepository.deleteAllOf(tx, state.personId);
        return { personId: state.personId };
      });
    },
  };
}

export type UserService = ReturnType<typeof createUserService>;
