import { randomFillSync } from 'node:crypto';

// uuid's own v7 draws its 16 random bytes with a getrandom call per id: 1.4 µs in a loop, and a twentieth
// of a PATCH's CPU under load in the bench's profile (a write makes two ids: the row's and its event's).
// Drawing 4 KiB at a time makes that one call per 256 ids.
const pool = new Uint8Array(4096);
let offset = pool.length;

function randomBytes16(): Uint8Array {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  return pool.subarray(offset, (offset += 16));
}

// The monotonic counter of RFC 9562 (method 1), kept as uuid keeps it for its own v7: ids made in one millisecond
// by this process still sort in the order made.
let lastMsecs = -Infinity;
let seq = 0;

// uuid lays the id out in 16 bytes and formats them one by one (0.39 µs an id in a loop, two a write); the first
// 14 characters are the millisecond's, the same for every id of it, and the rest is 8 bytes. The same layout as
// uuid's v7 (RFC 9562: 48 bits of time, version 7, the counter's 12 + 6 + 8 + 6 bits around the variant, then
// random bits), written here; ids.test.ts holds it to uuid's text for the same time, counter and bytes.
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'));
let prefixMsecs = Number.NaN;
let prefix = '';

/** uuid's `v7({ random, msecs, seq })`, the same text. */
export function formatV7(random: Uint8Array, msecs: number, seq: number): string {
  if (msecs !== prefixMsecs) {
    const time = msecs.toString(16).padStart(12, '0');
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-`;
    prefixMsecs = msecs;
  }
  return (
    prefix +
    HEX[0x70 | ((seq >>> 28) & 0x0f)]! +
    HEX[(seq >>> 20) & 0xff]! +
    '-' +
    HEX[0x80 | ((seq >>> 14) & 0x3f)]! +
    HEX[(seq >>> 6) & 0xff]! +
    '-' +
    HEX[((seq << 2) & 0xff) | (random[10]! & 0x03)]! +
    HEX[random[11]!]! +
    HEX[random[12]!]! +
    HEX[random[13]!]! +
    HEX[random[14]!]! +
    HEX[random[15]!]!
  );
}

/** UUIDv7: time-ordered, so primary-key indexes stay append-mostly and ids sort by creation. */
export function newId(): string {
  const random = randomBytes16();
  const now = Date.now();
  if (now > lastMsecs) {
    lastMsecs = now;
    seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    seq = (seq + 1) | 0;
    if (seq === 0) lastMsecs++;
  }
  return formatV7(random, lastMsecs, seq);
}
