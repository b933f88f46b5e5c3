// The authorization server's interactions (docs/authentication.md#oauth-2): sign-in through our own sign-in page and session,
// then a consent page naming the client and each scope it asks for, with Allow and Deny. oidc-provider keeps the
// interaction; these routes answer its prompts and hand the result back to it.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import { isScope, privilegedScopes, type Scope } from '../access/capabilities.ts';
import { forwardedHeaders } from '../auth/oauth/oauth-requests.ts';
import { describeScope, privilegedWarnings } from '../auth/scope-descriptions.ts';
import { publicOrigin } from '../public-origin.ts';
import { withAuditScope } from '../audit/audit-log.ts';
import { pageSource } from '../audit/entry-points.ts';
import { formString } from './forms.ts';
import { PageError } from './page-context.ts';
import { allowancesUnder } from './scope-capabilities.ts';
import type { PageRoutes } from './page-routes.ts';

type Uid = { Params: { uid: string } };
type Details = Awaited<ReturnType<Provider['interactionDetails']>>;

/** The scopes a consent prompt asks for (those the person has not granted this client yet). */
function requestedScopes(details: Details): Scope[] {
  const prompt = details.prompt.details as { missingResourceScopes?: Record<string, string[]>; missingOIDCScope?: string[] };
  const wanted = new Set<string>([...Object.values(prompt.missingResourceScopes ?? {}).flat(), ...(prompt.missingOIDCScope ?? [])]);
  return [...wanted].filter(isScope);
}

export const consentPages: PageRoutes = (scope, { config, render, authorizationServers }) => {
  /** The provider of this organisation, with the raw request told the public origin (its cookies depend on it). */
  async function providerFor(request: FastifyRequest) {
    const org = request.organisation!;
    request.raw.headers = forwardedHeaders(request.raw.headers, publicOrigin(config, org.address), request.ip);
    return authorizationServers.forOrganisation(org);
  }

  async function detailsOf(provider: Provider, request: FastifyRequest, reply: FastifyReply): Promise<Details> {
    try {
      const details = await provider.interactionDetails(request.raw, reply.raw);
      if (details.uid !== (request.params as { uid: string }).uid) throw new Error('another interaction');
      return details;
    } catch {
      throw new PageError(400, 'This sign-in request has ended', 'It expired or was already answered. Go back to the application and start again.');
    }
  }

  /** oidc-provider answers with the redirect itself. */
  async function finish(provider: Provider, request: FastifyRequest, reply: FastifyReply, result: Parameters<Provider['interactionFinished']>[2]) {
    reply.hijack();
    await provider.interactionFinished(request.raw, reply.raw, result, { mergeWithLastSubmission: false });
  }

  scope.get<Uid>('/oauth/interaction/:uid', async (request, reply) => {
    const provider = await providerFor(request);
    const details = await detailsOf(provider, request, reply);
    const person = request.signedIn;
    if (!person) return reply.redirect(`/login?return_to=${encodeURIComponent(request.url)}`, 303);
    if (details.prompt.name === 'login') return finish(provider, request, reply, { login: { accountId: person.personId, remember: false } });
    if (details.session?.accountId !== person.personId) return finish(provider, request, reply, { login: { accountId: person.personId, remember: false } });

    const client = await provider.Client.find(String(details.params.client_id));
    if (!client) throw new PageError(400, 'Unknown application', 'The application asking for access is not registered here.');
    // Each scope with what it would let the application do as this person: their roles decide, not the scope.
    const scopes = requestedScopes(details).map((s) => ({
      name: s,
      meaning: describeScope(s),
      allows: allowancesUnder(s, person.capabilities),
      privileged: privilegedScopes.includes(s),
      warning: privilegedWarnings[s],
    }));
    return render(request, reply, 'oauth/consent', {
      title: 'Allow access?',
      narrow: true,
      uid: details.uid,
      client: { name: client.clientName ?? client.clientId, id: client.clientId, fromMetadataDocument: client.clientId.startsWith('https://') },
      scopes,
    });
  });

  scope.post<Uid>('/oauth/interaction/:uid', async (request, reply) => {
    const provider = await providerFor(request);
    const details = await detailsOf(provider, request, reply);
    const person = request.signedIn;
    if (!person || details.session?.accountId !== person.personId) return reply.redirect(`/oauth/interaction/${encodeURIComponent(details.uid)}`, 303);
    if (formString(request.body, 'decision') !== 'allow') {
      return finish(provider, request, reply, { error: 'access_denied', error_description: 'The person denied the request.' });
    }
    const prompt = details.prompt.details as { missingResourceScopes?: Record<string, string[]>; missingOIDCScope?: string[] };
    const grant = details.grantId ? await provider.Grant.find(details.grantId) : new provider.Grant({ accountId: person.personId, clientId: String(details.params.client_id) });
    if (!grant) throw new PageError(400, 'This sign-in request has ended', 'Go back to the application and start again.');
    if (prompt.missingOIDCScope) grant.addOIDCScope(prompt.missingOIDCScope.join(' '));
    for (const [resource, scopes] of Object.entries(prompt.missingResourceScopes ?? {})) grant.addResourceScope(resource, scopes.join(' '));
    // The grant's record is stored with the consent's audit entry (audit/oauth-audit.ts).
    const grantId = await withAuditScope(pageSource(request, 'oauth'), 'oauth.consent', () => grant.save());
    return finish(provider, request, reply, { consent: { grantId } });
  });
};
