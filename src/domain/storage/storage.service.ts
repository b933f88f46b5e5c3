// Storage targets and files (spec operation 5; docs/api-guide.md#enrolment-methods-storage-and-files). New files go to the organisation's
// default target — its own directory target, or the deployment's storage — and each file records where it
// went, so that changing the default never moves or strands an existing file.
import { createHash } from 'node:crypto';
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { EventRecorder } from '../../events/outbox.ts';
import { ApiError, fieldError } from '../../errors/api-error.ts';
import { foundOr404 } from '../resource-rows.ts';
import { newId } from '../../ids.ts';
import { resolveTargetDirectory, type FileStore } from './file-store.ts';
import type { CreateStorageTarget, File, StorageTarget, UploadFile } from './storage.schemas.ts';
import { storageRepository, type FileRow, type StorageTargetRow } from './storage.repository.ts';
import { FinalStatementRefused, finalStatementOffered } from '../../db/final-statement.ts';

export const DEPLOYMENT_TARGET = 'deployment';
const MAX_TARGETS = 50;

type TargetView = Static<typeof StorageTarget>;

export interface StorageDeps {
  clock: Clock;
  events: EventRecorder;
  store: FileStore;
  storageDir: string;
  storageTargetsRoot: string;
}

const toTargetView = (r: StorageTargetRow): TargetView => ({
  id: r.id,
  kind: 'directory',
  name: r.name,
  directory: r.directory,
  is_default: Boolean(r.is_default),
  created_at: r.created_at,
  updated_at: r.updated_at,
});

const toFileView = (r: FileRow): Static<typeof File> => ({
  id: r.id,
  filename: r.filename,
  content_type: r.content_type,
  size: Number(r.size),
  sha256: r.sha256,
  storage_target_id: r.storage_target_id ?? DEPLOYMENT_TARGET,
  created_at: r.created_at,
});

/** How many organisations' default targets a process remembers (src/http/tenancy-cache.ts keeps as many). */
const KNOWN_DEFAULTS_MAX = 10_000;

export function createStorageService(deps: StorageDeps) {
  const { clock, events, store } = deps;

  /**
   * Each organisation's default target as this process last read it (null: the deployment storage): where a new
   * file's bytes go when the upload is one statement, whose premise is that it still is the default. A target's
   * directory never changes; which target is the default may, in any process, and the premise catches that.
   * One entry per organisation this process stored a file for, bounded as the tenancy cache is: full, it starts
   * over (a forgotten default costs the next upload the full path).
   */
  const knownDefaults = new Map<string, StorageTargetRow | null>();
  const remember = (organisationId: string, target: StorageTargetRow | null) => {
    if (knownDefaults.size >= KNOWN_DEFAULTS_MAX && !knownDefaults.has(organisationId)) knownDefaults.clear();
    knownDefaults.set(organisationId, target);
  };

  const directoryOf = (target: StorageTargetRow | undefined) =>
    target === undefined ? deps.storageDir : (resolveTargetDirectory(deps.storageTargetsRoot, target.directory) ?? deps.storageDir);

  return {
    async listTargets(db: Db, organisationId: string) {
      const rows = await storageRepository.targets(db, organisationId);
      const deployment: TargetView = {
        id: DEPLOYMENT_TARGET,
        kind: 'deployment',
        name: 'Deployment storage',
        directory: null,
        is_default: !rows.some((r) => Boolean(r.is_default)),
        created_at: null,
        updated_at: null,
      };
      return { data: [deployment, ...rows.map(toTargetView)], page: { next_cursor: null, has_more: false, limit: MAX_TARGETS + 1 } };
    },

    async createTarget(db: Db, organisationId: string, input: Static<typeof CreateStorageTarget>): Promise<TargetView> {
      const absolute = resolveTargetDirectory(deps.storageTargetsRoot, input.directory);
      if (absolute === undefined || input.directory.split('/').some((s) => s === '.' || s === '..')) {
        throw fieldError('/directory', 'outside_root', 'The directory must stay below the storage root the operator allows.');
      }
      if ((await storageRepository.targets(db, organisationId)).length >= MAX_TARGETS) {
        throw new ApiError('storage.too_many_targets', `An organisation has at most ${MAX_TARGETS} storage targets.`);
      }
      const at = nowIso(clock);
      const row: StorageTargetRow = { id: newId(), organisation_id: organisationId, name: input.name, directory: input.directory, is_default: false, created_at: at, updated_at: at };
      try {
        await storageRepository.insertTarget(db, row);
      } catch (err) {
        if (isUniqueViolation(err)) throw new ApiError('storage.directory_taken', `Another storage target of this organisation uses ${input.directory}.`);
        throw err;
      }
      await events.record(db, organisationId, 'storage_target.created', { id: row.id, summary: `Storage target ${JSON.stringify(row.name)} added.` });
      return toTargetView(row);
    },

    async makeDefault(db: Db, organisationId: string, id: string): Promise<TargetView> {
      const target = await foundOr404(storageRepository.target(db, organisationId, id), 'storage_target.not_found', `No storage target ${id} in this organisation.`);
      if (target.is_default) throw new ApiError('storage.already_default', `Storage target ${JSON.stringify(target.name)} is already the default for new files.`);
      const at = nowIso(clock);
      await storageRepository.setDefault(db, organisationId, id, at);
      await events.record(db, organisationId, 'storage.default_target_changed', { id, storage_target_id: id, summary: `New files now go to ${JSON.stringify(target.name)}.` });
      return toTargetView({ ...target, is_default: true, updated_at: at });
    },

    /**
     * spec: operation 5 — the deployment's storage becomes the default for new files; existing files stay on
     * their recorded targets. Already the default: 409 (nothing to change; a retry with the same
     * Idempotency-Key replays the first 200).
     */
    async restoreDeployment(db: Db, organisationId: string): Promise<{ ok: boolean }> {
      const current = await storageRepository.defaultTarget(db, organisationId);
      if (!current) throw new ApiError('storage.already_default', 'The deployment storage is already the default for new files.');
      await storageRepository.setDefault(db, organisationId, null, nowIso(clock));
      await events.record(db, organisationId, 'storage.default_target_changed', {
        id: organisationId,
        storage_target_id: DEPLOYMENT_TARGET,
        summary: `New files now go to the deployment storage instead of ${JSON.stringify(current.name)}.`,
      });
      return { ok: true };
    },

    async upload(db: Db, organisationId: string, personId: string, input: Static<typeof UploadFile>) {
      const bytes = Buffer.from(input.content_base64, 'base64');
      // One round trip (PostgreSQL, db/final-statement.ts): the bytes go to the default target as this process
      // last read it (the deployment storage, most organisations' default, where it has not read it yet), and the
      // row and its event go with the COMMIT, on the premise that it still is the default. When it is not (another
      // request changed it, or it never was), the bytes just written are removed and the request runs again down
      // here, reading the default, which this process then remembers.
      const offered = finalStatementOffered();
      const target = offered ? (knownDefaults.get(organisationId) ?? undefined) : await storageRepository.defaultTarget(db, organisationId);
      if (!offered) remember(organisationId, target ?? null);
      const row: FileRow = {
        id: newId(),
        organisation_id: organisationId,
        storage_target_id: target?.id ?? null,
        filename: input.filename,
        content_type: input.content_type ?? 'application/octet-stream',
        size: bytes.length,
        sha256: createHash('sha256').update(bytes).digest('hex'),
        created_by: personId,
        created_at: nowIso(clock),
      };
      // Bytes first: if the transaction then fails, an unreferenced file is left behind, never a row
      // pointing at nothing.
      const directory = directoryOf(target);
      await store.write(directory, organisationId, row.id, bytes);
      const event = { storageTargetId: row.storage_target_id ?? DEPLOYMENT_TARGET, summary: `File ${JSON.stringify(row.filename)} stored.` };
      if (offered) {
        try {
          return toFileView(await storageRepository.createFileInOneStatement(db, row, event));
        } catch (err) {
          if (err instanceof FinalStatementRefused) {
            knownDefaults.delete(organisationId);
            await store.remove(directory, organisationId, row.id);
          }
          throw err;
        }
      }
      await storageRepository.insertFile(db, row);
      await events.record(db, organisationId, 'file.created', { id: row.id, storage_target_id: event.storageTargetId, summary: event.summary });
      return toFileView(row);
    },

    async getFile(db: Db, organisationId: string, id: string) {
      return toFileView(await foundOr404(storageRepository.file(db, organisationId, id), 'file.not_found', `No file ${id} in this organisation.`));
    },

    /** Reads from the target the file was written to, whatever the default is now. */
    async fileContent(db: Db, organisationId: string, id: string): Promise<{ contentType: string; filename: string; bytes: Buffer }> {
      const row = await foundOr404(storageRepository.file(db, organisationId, id), 'file.not_found', `No file ${id} in this organisation.`);
      const target = row.storage_target_id === null ? undefined : await storageRepository.target(db, organisationId, row.storage_target_id);
      return { contentType: row.content_type, filename: row.filename, bytes: await store.read(directoryOf(target), organisationId, row.id) };
    },
  };
}

export type StorageService = ReturnType<typeof createStorageService>;
