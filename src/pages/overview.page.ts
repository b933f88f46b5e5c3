// GET /admin: the pages this person may open (docs/authentication.md#signing-in-and-the-admin-area: an index at /admin).
import { pagesFor } from './navigation.ts';
import type { PageRoutes } from './page-routes.ts';

export const overviewPage: PageRoutes = (scope, { render }) => {
  scope.get('/admin', { config: { adminPage: { capability: null } } }, async (request, reply) =>
    render(request, reply, 'admin/overview', { title: 'Administration', pages: pagesFor(request.signedIn!.capabilities) }),
  );
};
