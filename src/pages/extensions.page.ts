// /admin/extensions (spec: What the service does 7; docs/authentication.md#signing-in-and-the-admin-area): every compiled-in extension
// grouped by kind, a checkbox each, Save. The same switches GET /extensions reports.
import { extensionKinds, type ExtensionKind } from '../domain/extensions/extensions.catalog.ts';
import { auditChange } from '../audit/audit-log.ts';
import { formList } from './forms.ts';
import { redirectWithFlash } from './page-context.ts';
import type { PageRoutes } from './page-routes.ts';

const PAGE = '/admin/extensions';
const config = { adminPage: { capability: 'tenant/configure' as const } };

const kindTitles: Record<ExtensionKind, string> = {
  activity_type: 'Activity types',
  block: 'Blocks',
  enrolment_method: 'Enrolment methods',
  login_method: 'Login methods',
  question_type: 'Question types',
  report: 'Reports',
  theme: 'Themes',
  integration: 'Integrations',
};

export const extensionsPage: PageRoutes = (scope, { app, services, render }) => {
  scope.get(PAGE, { config }, async (request, reply) => {
    const extensions = await services.extensions.list(app.db, request.organisation!.id);
    const groups = extensionKinds.map((kind) => ({ kind, title: kindTitles[kind], extensions: extensions.filter((e) => e.kind === kind) }));
    return render(request, reply, 'admin/extensions', { title: 'Extensions', groups });
  });

  scope.post(PAGE, { config }, async (request, reply) => {
    const orgId = request.organisation!.id;
    const wanted = new Set(formList(request.body, 'enabled'));
    const changed = await app.db.transaction().execute(async (tx) => {
      const names: string[] = [];
      for (const e of await services.extensions.list(tx, orgId)) {
        if (e.enabled === wanted.has(e.id)) continue;
        await services.extensions.setEnabled(tx, orgId, e.id, !e.enabled);
        names.push(`${e.title} ${e.enabled ? 'off' : 'on'}`);
      }
      // Switching extensions emits no event: its audit entry is written here.
      if (names.length > 0) await auditChange(tx, orgId, { type: 'organisation', id: orgId });
      return names;
    });
    return redirectWithFlash(services.sessions, request, reply, PAGE, { notice: changed.length === 0 ? 'Nothing changed.' : `Saved: ${changed.join(', ')}.` });
  });
};
