/**
 * Digests of records: of packed records (an incremental publish compares a module's digest with the one in
 * the previous version's manifest to find what an edit touched, without comparing bytes), and of source
 * records (a publish takes over the bytes of modules whose source is unchanged, builder/publish/reuse.ts).
 */
import { createHash } from 'node:crypto';
import { digest128 } from '../../store/layout.js';
import type { PackedRecord } from '../../store/segments.js';

export const DIGEST_BYTES = 16;

/**
 * Write the 16-byte digest of a packed record (offsets, then bytes) at `DIGEST_BYTES * position` of `into`.
 * @example writeRecordDigest(packRecord(fragments), digests, 0) // digests.subarray(0, 16) now holds it
 */
export function writeRecordDigest(record: PackedRecord, into: Buffer, position: number): void {
  const { bytes, offsets } = record;
  const hash = createHash('sha256');
  hash.update(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength));
  hash.update(bytes);
  hash.digest().copy(into, DIGEST_BYTES * position, 0, DIGEST_BYTES);
}

/**
 * The digest of a packed record, base64url.
 * @example recordDigest(packRecord(fragments)) // → 'q2…' (22 characters)
 */
export function recordDigest(record: PackedRecord): string {
  const digest = Buffer.alloc(DIGEST_BYTES);
  writeRecordDigest(record, digest, 0);
  return digest.toString('base64url');
}

/**
 * The digest of each module's source record, by position: of its text in modules.json when `text` (the
 * file's bytes) is given, else of its JSON. Either way equal digests mean equal records; a record only
 * formatted differently is merely not reused.
 * @example sourceDigests(snapshot.modules)[0] // → 'q2…' (22 characters)
 */
export function sourceDigests(modules: readonly unknown[], text?: Uint8Array): string[] {
  const ranges = text && elementRanges(text);
  if (ranges && ranges.length === 2 * modules.length) {
    return modules.map((_, i) => digest128(text.subarray(ranges[2 * i], ranges[2 * i + 1])));
  }
  return modules.map((module) => digest128(JSON.stringify(module) ?? 'undefined'));
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

/**
 * Byte ranges (start, end, start, end, …) of the objects that are elements of the top-level array of `text`,
 * which JSON.parse accepted: one pass over the bytes, skipping strings (where brackets are text). About a
 * third of what serialising every record again costs; the caller checks that there is one range per element.
 * @example elementRanges(Buffer.from('[{"a":1}, {"b":"}"}]')) // → Uint32Array [1, 8, 10, 19]
 */
export function elementRanges(text: Uint8Array): Uint32Array | undefined {
  const ranges: number[] = [];
  const end = text.length;
  let depth = 0;
  let start = 0;
  for (let i = 0; i < end; i++) {
    const c = text[i];
    if (c === QUOTE) {
      for (i++; i < end && text[i] !== QUOTE; i++) if (text[i] === BACKSLASH) i++;
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === 1) start = i;
      depth++;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
      if (depth === 1) {
        if (text[start] !== OPEN_BRACE) return undefined; // an element that is an array
        ranges.push(start, i + 1);
      }
    }
  }
  return depth === 0 ? Uint32Array.from(ranges) : undefined;
}
