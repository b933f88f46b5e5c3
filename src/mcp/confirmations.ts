// Confirmations of destructive tools (docs/mcp.md#confirmations). A confirmation is either the `confirmation_token` a
// client sends back as an argument, or the request state of an elicitation (input_required) that the client
// echoes on its retry. Both are the same signed value: the organisation, the person, the tool and a hash of the
// exact arguments, a nonce and an expiry 5 minutes ahead, with an HMAC by a deployment-wide key (the retry may
// reach another process). Each is good once: its nonce is recorded when used, in the database, so a replay is
// refused on every process. Time comes from the injected clock.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { sameText } from '../crypto/same-text.ts';
import type { Clock } from '../clock.ts';
import type { Db } from '../db/database.ts';
import { confirmationsRepository } from './confirmations.repository.ts';

export const CONFIRMATION_TTL_MS = 5 * 60_000;
const TOKEN_PREFIX = 'atr_cf_';
const MAC_CONTEXT = 'atrium.mcp.confirmation.v1.';

export type ConfirmationKind = 'token' | 'elicitation';

export interface ConfirmationBinding {
  organisationId: string;
  personId: string;
  tool: string;
  /** The call's arguments, without the confirmation itself. */
  arguments: Record<string, unknown>;
}

interface Payload {
  k: ConfirmationKind;
  n: string;
  o: string;
  p: string;
  t: string;
  h: string;
  /** Expiry, milliseconds since the epoch. */
  e: number;
}

/** JSON with keys in a fixed order at every depth: equal arguments give equal text. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const argumentsHash = (args: Record<string, unknown>): string => createHash('sha256').update(canonical(args)).digest('base64url');

export function createConfirmations(deps: { db: Db; clock: Clock; key: string }) {
  const { db, clock } = deps;
  const mac = (body: string) => createHmac('sha256', deps.key).update(MAC_CONTEXT + body).digest();

  function read(value: string): Payload | undefined {
    const raw = value.startsWith(TOKEN_PREFIX) ? value.slice(TOKEN_PREFIX.length) : value;
    const dot = raw.indexOf('.');
    if (dot <= 0) return undefined;
    const body = raw.slice(0, dot);
    if (!sameText(raw.slice(dot + 1), mac(body).toString('base64url'))) return undefined;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Payload;
    } catch {
      return undefined;
    }
  }

  return {
    /** A new confirmation for this exact call. */
    issue(kind: ConfirmationKind, binding: ConfirmationBinding): { value: string; expiresAt: string } {
      const expires = clock.now().getTime() + CONFIRMATION_TTL_MS;
      const payload: Payload = { k: kind, n: randomBytes(16).toString('base64url'), o: binding.organisationId, p: binding.personId, t: binding.tool, h: argumentsHash(binding.arguments), e: expires };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      const value = `${body}.${mac(body).toString('base64url')}`;
      return { value: kind === 'token' ? TOKEN_PREFIX + value : value, expiresAt: new Date(expires).toISOString() };
    },

    /**
     * Uses a confirmation for this exact call: true once, when it is ours, unexpired, of this kind and bound to
     * this organisation, person, tool and arguments; false otherwise (wrong, used, expired or mismatched).
     */
    async redeem(kind: ConfirmationKind, value: unknown, binding: ConfirmationBinding): Promise<boolean> {
      if (typeof value !== 'string' || value.length > 2000) return false;
      const payload = read(value);
      const now = clock.now();
      if (!payload || payload.k !== kind || typeof payload.e !== 'number' || payload.e <= now.getTime()) return false;
      if (payload.o !== binding.organisationId || payload.p !== binding.personId || payload.t !== binding.tool || payload.h !== argumentsHash(binding.arguments)) return false;
      await confirmationsRepository.purgeExpired(db, now.toISOString());
      return confirmationsRepository.markUsed(db, { nonce: payload.n, organisation_id: binding.organisationId, used_at: now.toISOString(), expires_at: new Date(payload.e).toISOString() });
    },
  };
}

export type Confirmations = ReturnType<typeof createConfirmations>;
