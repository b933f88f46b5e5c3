// Signing secrets: `whsec_` + base64 of 32 random bytes, as Standard Webhooks has them. They are stored sealed
// (src/crypto/secret-box.ts) under the deployment's webhook key.
import { randomBytes } from 'node:crypto';

export function generateSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}
