// Signing a person in with e-mail and password (docs/authentication.md#signing-in-and-the-admin-area). No oracle: an unknown e-mail, a person
// without a password and a wrong password take the same path (one scrypt verification) and the same answer.
import { hashPassword, verifyPassword } from '../crypto/passwords.ts';
import type { LoginAttempt, LoginThrottle } from './login-throttle.ts';
import type { PeopleService } from '../domain/people/people.service.ts';
import type { SessionService } from './sessions.service.ts';

export type SignInResult =
  | { outcome: 'signed_in'; token: string; sessionId: string; personId: string }
  | { outcome: 'wrong_pair' }
  | { outcome: 'locked'; retryAfterSeconds: number };

export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

export function createSignInService(deps: { people: PeopleService; sessions: SessionService; throttle: LoginThrottle }) {
  const { people, sessions, throttle } = deps;
  // Verified against when there is no real hash, so that a wrong e-mail costs what a wrong password costs.
  let decoy: Promise<string> | undefined;
  const decoyHash = () => (decoy ??= hashPassword('decoy password that matches nothing'));

  return {
    async signIn(input: { organisationId: string; email: string; password: string; clientAddress: string }): Promise<SignInResult> {
      const attempt: LoginAttempt = { organisationId: input.organisationId, email: normaliseEmail(input.email), clientAddress: input.clientAddress };
      // No address or password holds NUL (PostgreSQL cannot even compare one): a wrong pair, at a wrong pair's cost.
      if (attempt.email.includes('\u0000') || input.password.includes('\u0000')) {
        await verifyPassword(input.password, await decoyHash());
        return { outcome: 'wrong_pair' };
      }
      const retryAfterSeconds = await throttle.retryAfter(attempt);
      if (retryAfterSeconds > 0) return { outcome: 'locked', retryAfterSeconds };
      const person = await people.findByEmail(input.organisationId, attempt.email);
      const hash = person?.password_hash ?? (await decoyHash());
      const matches = await verifyPassword(input.password, hash);
      if (!person || person.password_hash === null || !matches) {
        await throttle.recordFailure(attempt);
        return { outcome: 'wrong_pair' };
      }
      await throttle.forgetEmailFailures(attempt);
      const session = await sessions.start(input.organisationId, person.id);
      return { outcome: 'signed_in', token: session.token, sessionId: session.id, personId: person.id };
    },
  };
}

export type SignInService = ReturnType<typeof createSignInService>;
