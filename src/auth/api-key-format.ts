// API key format (docs/authentication.md#api-keys): `atr_live_` or `atr_test_`, then 256 random bits in base62, then a 6-character
// CRC32 checksum of the random part. The checksum lets secret scanners recognise a leaked key offline and
// lets us reject typos without a database read. Only the SHA-256 of the whole key is stored.
import { createHash, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_CHARS = 43; // ceil(256 / log2(62))
const CHECKSUM_CHARS = 6;
const KEY_PATTERN = /^atr_(live|test)_([0-9A-Za-z]{43})([0-9A-Za-z]{6})$/;

function base62(value: bigint, width: number): string {
  let out = '';
  for (let i = 0; i < width; i++) {
    out = ALPHABET[Number(value % 62n)] + out;
    value /= 62n;
  }
  return out;
}

const checksum = (random: string): string => base62(BigInt(crc32(random)), CHECKSUM_CHARS);

export function generateApiKey(mode: 'live' | 'test'): string {
  const random = base62(BigInt('0x' + randomBytes(32).toString('hex')), RANDOM_CHARS);
  return `atr_${mode}_${random}${checksum(random)}`;
}

export function looksLikeApiKey(token: string): boolean {
  return token.startsWith('atr_live_') || token.startsWith('atr_test_');
}

/** True when the key has our form and its checksum matches: no database read needed to reject a typo. */
export function isWellFormedApiKey(token: string): boolean {
  const m = KEY_PATTERN.exec(token);
  return m !== null && checksum(m[2]) === m[3];
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What listings show: enough to tell keys apart, far too little to use. */
export function displayPrefix(key: string): string {
  return key.slice(0, 'atr_live_'.length + 6);
}
