// Secrets that must stay readable (a webhook signing secret signs every delivery; a key shown once must reach
// the next page) cannot be hashed: they are encrypted with AES-256-GCM under a key kept apart from the rows,
// so a copy of a table alone reveals none of them.
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

export function createSecretBox(keyMaterial: string) {
  const key = createHash('sha256').update(keyMaterial).digest();
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
