// Which compiled-in extensions an organisation has switched on. Services that create a resource provided by
// an extension (an enrolment method of type `self`, a wiki activity) call `requireEnabled` first.
import type { Static } from 'typebox';
import { type Clock, nowIso } from '../../clock.ts';
import type { Db } from '../../db/database.ts';
import { ApiError } from '../../errors/api-error.ts';
import { extensionCatalog, extensionFor, isExtensionId, type ExtensionKind } from './extensions.catalog.ts';
import type { Extension } from './extensions.schemas.ts';
import { extensionsRepository } from './extensions.repository.ts';

export function createExtensionService(deps: { clock: Clock }) {
  return {
    async list(db: Db, organisationId: string): Promise<Static<typeof Extension>[]> {
      const switches = new Map((await extensionsRepository.switches(db, organisationId)).map((r) => [r.extension, r]));
      return Object.entries(extensionCatalog).map(([id, e]) => {
        const s = switches.get(id);
        return { id, kind: e.kind, name: e.name, title: e.title, description: e.description, enabled: s === undefined ? true : Boolean(s.enabled), updated_at: s?.updated_at ?? null };
      });
    },

    /**
     * Refuses (409) when the extension that provides `kind`/`name` is switched off in this organisation.
     * `disabled`: what the caller already read of its switch (extensionsRepository.isDisabledSql), if it did.
     */
    async requireEnabled(db: Db, organisationId: string, kind: ExtensionKind, name: string, pointer: string, disabled?: boolean): Promise<void> {
      const id = extensionFor(kind, name);
      if (id === undefined) throw new ApiError('validation.invalid_body', `No ${kind.replace('_', ' ')} called ${name}.`, { errors: [{ path: pointer, code: 'invalid_value', detail: `Unknown ${kind}.` }] });
      if (disabled ?? (await extensionsRepository.isDisabled(db, organisationId, id))) {
        throw new ApiError('extension.disabled', `The extension ${id} (${extensionCatalog[id].title}) is switched off in this organisation.`);
      }
    },

    async setEnabled(db: Db, organisationId: string, extension: string, enabled: boolean): Promise<void> {
      if (!isExtensionId(extension)) throw new ApiError('extension.not_found', `No extension ${extension}.`);
      await extensionsRepository.set(db, organisationId, extension, enabled, nowIso(deps.clock));
    },
  };
}

export type ExtensionService = ReturnType<typeof createExtensionService>;
