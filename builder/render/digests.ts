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
 * The digest of each module's source record, by position, from its JSON: what a publish compares when the
 * snapshot's loader did not give the digests of the records' own text (builder/snapshot/load.ts). Equal digests
 * mean equal records; a record only formatted differently is merely not reused.
 * @example sourceDigests(snapshot.modules)[0] // → 'q2…' (22 characters)
 */
export function sourceDigests(modules: readonly unknown[]): string[] {
  return modules.map((module) => digest128(JSON.stringify(module) ?? 'undefined'));
}
