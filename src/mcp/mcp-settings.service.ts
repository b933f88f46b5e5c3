// An organisation's MCP settings (CONTRACT: MCP; the /admin/integrations/mcp page): whether the server is on,
// which tools are on, and whether clients may register themselves (RFC 7591 and Client ID Metadata Documents).
// Read from the database on every use, so a change is seen at once by every server process.
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
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
  return {
    async get(organisationId: string, tx: Db = db): Promise<McpSettings> {
      const row = await mcpSettingsRepository.find(tx, organisationId);
      if (!row) return { enabled: true, allowSelfRegistration: true, toolsOn: undefined };
      return {
        enabled: Boolean(row.enabled),
        allowSelfRegistration: Boolean(row.allow_self_registration),
        toolsOn: new Set(JSON.parse(row.tools_on) as string[]),
        toolsKnown: row.tools_known === null ? undefined : new Set(JSON.parse(row.tools_known) as string[]),
      };
    },
    async save(organisationId: string, settings: { enabled: boolean; allowSelfRegistration: boolean; toolsOn: Iterable<string>; toolsKnown?: Iterable<string> }, tx: Db = db): Promise<void> {
      await mcpSettingsRepository.save(tx, {
        organisation_id: organisationId,
        enabled: settings.enabled,
        allow_self_registration: settings.allowSelfRegistration,
        tools_on: JSON.stringify([...settings.toolsOn].sort()),
        tools_known: settings.toolsKnown === undefined ? null : JSON.stringify([...settings.toolsKnown].sort()),
        updated_at: clock.now().toISOString(),
      });
    },
  };
}

export type McpSettingsService = ReturnType<typeof createMcpSettingsService>;
