// GET /admin: the pages this person may open (CONTRACT: The admin area, an index at /admin).
import { pagesFor } from './navigation.ts';
import type { PageRoutes } from './page-routes.ts';

export const overviewPage: PageRoutes = (scope, { render }) => {
  scope.get('/admin', { config: { adminPage: { capability: null } } }, async (request, reply) =>
    render(request, reply, 'admin/overview', { title: 'Administration', pages: pagesFor(request.signedIn!.capabilities) }),
  );
};
