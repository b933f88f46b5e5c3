// Who is calling: the credential that authenticated the request and the person it acts for.
// API keys are the first kind; OAuth access tokens plug in as a second `kind` with the same shape.
import type { Capability, Scope } from './capabilities.ts';
import type { MaybeAsync } from '../maybe-async.ts';

export interface Actor {
  kind: 'api_key' | 'oauth_token';
  credentialId: string;
  organisationId: string;
  personId: string;
  scopes: ReadonlySet<Scope>;
  capabilities: ReadonlySet<Capability>;
  /** The revision pinned on the credential when it was issued (spec: Versioning 3). */
  pinnedRevision: string;
  mode: 'live' | 'test';
}

/** Resolves a presented bearer token to an actor of this organisation, or throws a 401 ApiError. */
export interface Authenticator {
  /** Whether this authenticator recognises the token's form (e.g. its prefix). */
  accepts(token: string): boolean;
  /**
   * `credentialsEpoch` is the organisation's epoch as this request read it with the organisation. An
   * authenticator that caches what it verified keeps it only while the epoch is unchanged
   * (createCredentialCache in credential-epoch.ts); one that does not cache may ignore it. A credential found
   * in that cache is answered at once (src/maybe-async.ts).
   */
  authenticate(token: string, organisationId: string, credentialsEpoch: number): MaybeAsync<Actor>;
}
