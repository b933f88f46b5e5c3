// What a page module registers and what it is given: each *.page.ts exports a PageRoutes, and pages.ts
// registers them all on the pages scope.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { AuthorizationServers } from '../auth/oauth/authorization-servers.ts';
import type { SignInService } from '../auth/sign-in.service.ts';
import type { Services } from '../services.ts';
import type { RenderPage } from './page-context.ts';

export interface PageDeps {
  app: FastifyInstance;
  config: Config;
  services: Services;
  signIn: SignInService;
  render: RenderPage;
  authorizationServers: AuthorizationServers;
}

/** A page route's parts: the routes register themselves on the pages scope. */
export type PageRoutes = (scope: FastifyInstance, deps: PageDeps) => void;
