// /admin/audit (docs/audit-log.md): the audit log, newest first, with the API's filters as query parameters of
// a GET form, so that a filtered view is a link that can be shared and the page works without JavaScript.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.ts';
import { validateAsBody } from '../operations/body-validation.ts';
import { fieldErrorsOf, formString, type FieldErrors } from './forms.ts';
import type { PageRoutes } from './page-routes.ts';
import { AuditEventsQuery } from '../domain/audit-events/audit.schemas.ts';
import type { AuditListParams } from '../domain/audit-events/audit.service.ts';

const PAGE = '/admin/audit';
const config = { adminPage: { capability: 'audit/view' as const } };
const PER_PAGE = 50;

const filterNames = ['actor_id', 'target_type', 'target_id', 'action', 'outcome', 'since', 'until'] as const;

export const auditPage: PageRoutes = (scope, { app, services, render }) => {
  scope.get(PAGE, { config }, async (request: FastifyRequest, reply: FastifyReply) => {
    const orgId = request.organisation!.id;
    // An empty field of the form is no filter.
    const values: Record<string, string> = {};
    for (const name of [...filterNames, 'cursor']) {
      const value = formString(request.query, name).trim();
      if (value !== '') values[name] = value;
    }
    let errors: FieldErrors = {};
    let page: Awaited<ReturnType<typeof services.audit.list>> | undefined;
    try {
      const params = validateAsBody<AuditListParams>(AuditEventsQuery, { ...values, limit: PER_PAGE });
      page = await services.audit.list(app.db, orgId, params);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status !== 422) throw err;
      errors = fieldErrorsOf(err);
      // A cursor is not a field of the form: its refusal is the form's.
      if (err.code === 'validation.invalid_parameter') errors = { _form: err.detail };
    }
    const next = page?.page.next_cursor ? `${PAGE}?${new URLSearchParams({ ...values, cursor: page.page.next_cursor })}` : null;
    return render(
      request,
      reply,
      'admin/audit',
      { title: 'Audit log', entries: page?.data ?? [], next, values, errors, outcomes: ['success', 'refused', 'failed'] },
      page ? 200 : 422,
    );
  });
};
