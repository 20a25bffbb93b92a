/**
 * Digests of packed records: an incremental publish compares a module's digest with the one in the previous
 * version's manifest to find what an edit touched, without comparing bytes.
 */
import { createHash } from 'node:crypto';
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
