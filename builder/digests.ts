/**
 * Digests of packed records: an incremental publish compares a module's digest with the one in the previous
 * version's manifest to find what an edit touched, without comparing bytes.
 */
import { createHash } from 'node:crypto';
import type { PackedRecord } from '../proxy/format.js';

export const DIGEST_BYTES = 16;

/**
 * 16-byte digests of packed records, back to back (record i at `16 * i`): offsets, then bytes.
 * @example recordDigests([packRecord(fragments)]).byteLength // → 16
 */
export function recordDigests(pool: readonly PackedRecord[]): Buffer {
  const digests = Buffer.alloc(DIGEST_BYTES * pool.length);
  for (let i = 0; i < pool.length; i++) {
    const { bytes, offsets } = pool[i]!;
    const hash = createHash('sha256');
    hash.update(new Uint8Array(offsets.buffer, offsets.byteOffset, offsets.byteLength));
    hash.update(bytes);
    hash.digest().copy(digests, DIGEST_BYTES * i, 0, DIGEST_BYTES);
  }
  return digests;
}
