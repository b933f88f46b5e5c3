// An organisation's MCP settings (docs/mcp.md#the-administrators-page; the /admin/integrations/mcp page): whether the server is on,
// which tools are on, and whether clients may register themselves (RFC 7591 and Client ID Metadata Documents).
//
// A change must apply at once on every server process. /mcp keeps the settings in memory under the
// organisation's credentials epoch (src/access/credential-epoch.ts), which every request reads fresh with the
// organisation: saving bumps the epoch in the same transaction, so the next request on any process misses and
// reads them again. What a credential may do over MCP is part of what that epoch guards.
import { type Clock, nowIso } from '../clock.ts';
import type { Db } from '../db/database.ts';
import type { Organisation } from '../domain/organisations/organisations.repository.ts';
import { bumpCredentialEpoch, createCredentialCache } from '../access/credential-epoch.ts';
import { auditChange } from '../audit/audit-log.ts';
import type { MaybeAsync } from '../maybe-async.ts';
import { mcpSettingsRepository } from './mcp-settings.repository.ts';

export interface McpSettings {
  enabled: boolean;
  allowSelfRegistration: boolean;
  /** The tools switched on; undefined: the defaults (every tool but the destructive ones). */
  toolsOn: ReadonlySet<string> | undefined;
  /**
   * The tools the administrator decided about when saving; a tool outside it (added to the service since)
   * follows its default. Undefined: every tool counts as decided.
   */
  toolsKnown?: ReadonlySet<string> | undefined;
}

export function createMcpSettingsService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  // Keyed by organisation id; an entry holds while the organisation's epoch is the one read before it was.
  const cache = createCredentialCache<McpSettings>();

  async function get(organisationId: string): Promise<McpSettings> {
    const row = await mcpSettingsRepository.find(db, organisationId);
    if (!row) return { enabled: true, allowSelfRegistration: true, toolsOn: undefined };
    return {
      enabled: Boolean(row.enabled),
      allowSelfRegistration: Boolean(row.allow_self_registration),
      toolsOn: new Set(JSON.parse(row.tools_on) as string[]),
      toolsKnown: row.tools_known === null ? undefined : new Set(JSON.parse(row.tools_known) as string[]),
    };
  }

  return {
    /** Read from the database now. */
    get,
    /**
     * As of `organisation`, which the caller read in this request: from memory while its credentials epoch holds,
     * and then at once (every /mcp request asks: src/maybe-async.ts).
     */
    current(organisation: Organisation): MaybeAsync<McpSettings> {
      const cached = cache.get(organisation.id, organisation.id, organisation.credentials_epoch);
      if (cached !== undefined) return cached;
      return get(organisation.id).then((settings) => {
        cache.set(organisation.id, organisation.id, organisation.credentials_epoch, settings);
        return settings;
      });
    },
    async save(organisationId: string, settings: { enabled: boolean; allowSelfRegistration: boolean; toolsOn: Iterable<string>; toolsKnown?: Iterable<string> }): Promise<void> {
      await db.transaction().execute(async (tx) => {
        await mcpSettingsRepository.save(tx, {
          organisation_id: organisationId,
          enabled: settings.enabled,
          allow_self_registration: settings.allowSelfRegistration,
          tools_on: JSON.stringify([...settings.toolsOn].sort()),
          tools_known: settings.toolsKnown === undefined ? null : JSON.stringify([...settings.toolsKnown].sort()),
          updated_at: nowIso(clock),
        });
        await bumpCredentialEpoch(tx, organisationId);
        // No event for this change: the page's audit entry is written here.
        await auditChange(tx, organisationId, { type: 'mcp_settings', id: organisationId });
      });
    },
  };
}

export type McpSettingsService = ReturnType<typeof createMcpSettingsService>;
