// Signing secrets (`whsec_` + base64 of 32 random bytes, as Standard Webhooks has them). They must stay usable
// to sign, so they cannot be hashed: they are encrypted at rest with AES-256-GCM under a deployment key kept
// apart from the rows, so a copy of the webhook table alone reveals none.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

export function createSecretBox(deploymentKey: string) {
  const key = createHash('sha256').update(deploymentKey).digest();
  return {
    seal(secret: string): string {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `v1:${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64')}`;
    },
    open(stored: string): string {
      const raw = Buffer.from(stored.slice(3), 'base64');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}

export type SecretBox = ReturnType<typeof createSecretBox>;
