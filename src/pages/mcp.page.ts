// /admin/integrations/mcp (spec: What the service does 5; docs/mcp.md#the-administrators-page, docs/authentication.md#oauth-2): whether the MCP
// server is on, which tools it offers (each with its description and whether it is read-only or destructive),
// and whether MCP clients may register themselves. Saving bumps the organisation's credentials epoch, so every
// server process applies the settings from its next MCP request on (mcp-settings.service.ts).
import { operations } from '../all-operations.ts';
import { buildTools, isToolOn } from '../mcp/tools.ts';
import { publicOrigin } from '../public-origin.ts';
import { formList, formString } from './forms.ts';
import { redirectWithFlash } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const PAGE = '/admin/integrations/mcp';
const config = { adminPage: { capability: 'tenant/configure' as const } };
const tools = buildTools(operations);

export const mcpPage: PageRoutes = (scope, { config: appConfig, services, render }) => {
  scope.get(PAGE, { config }, async (request, reply) => {
    const org = request.organisation!;
    const settings = await services.mcpSettings.get(org.id);
    const groups = new Map<string, Array<{ name: string; description: string; mark: string | null; on: boolean }>>();
    for (const tool of tools) {
      const { readOnlyHint, destructiveHint } = tool.listing.annotations!;
      const mark = destructiveHint ? 'destructive' : readOnlyHint ? 'read-only' : null;
      const group = groups.get(tool.op.tag) ?? [];
      group.push({ name: tool.name, description: tool.listing.description!, mark, on: isToolOn(tool, settings) });
      groups.set(tool.op.tag, group);
    }
    return render(request, reply, 'admin/mcp', {
      title: 'MCP server',
      endpoint: `${publicOrigin(appConfig, org.address)}/mcp`,
      settings,
      groups: [...groups].map(([tag, list]) => ({ tag, tools: list })),
    });
  });

  scope.post(PAGE, { config }, async (request, reply) => {
    const known = new Set(tools.map((t) => t.name));
    await services.mcpSettings.save(request.organisation!.id, {
      enabled: formString(request.body, 'enabled') === 'on',
      allowSelfRegistration: formString(request.body, 'allow_self_registration') === 'on',
      toolsOn: formList(request.body, 'tools').filter((name) => known.has(name)),
      toolsKnown: known,
    });
    return redirectWithFlash(services.sessions, request, reply, PAGE, { notice: 'Saved.' });
  });
};
