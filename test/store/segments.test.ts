/**
 * The segment encoding's digests (store/segments.ts, format 3): every range the proxy reads — a first
 * page's segment 0, each pair of segments a cursor reads — has the digest the format records where the proxy
 * meets it before the read (the index entry, or the segment before), and format-2 objects (no digests)
 * decode to the same records.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { digest128 } from '../../store/layout.js';
import {
  decodePackedVariant,
  decodeSegment,
  encodePackedVariant,
  PAIR_DIGEST_BYTES,
  type PackedRecord,
  packStrings,
  SEGMENT_SIZE,
} from '../../store/segments.js';

/** `count` records of three fragments of varied lengths. */
const recordsArb = fc
  .integer({ min: 1, max: 4 * SEGMENT_SIZE + 50 })
  .chain((count) =>
    fc.array(fc.tuple(fc.string({ maxLength: 12 }), fc.nat({ max: 40 })), {
      minLength: count,
      maxLength: count,
    }),
  )
  .map((rows) =>
    rows.map(
      ([name, pad], id): PackedRecord =>
        packStrings([`"id":${id}`, `"name":${JSON.stringify(name)}`, `"x":"${'x'.repeat(pad)}"`]),
    ),
  );

/** The start of every segment of `bytes`, and the object's length last. */
function startsOf(bytes: Buffer): number[] {
  const starts = [0];
  for (let at = 0; at < bytes.byteLength; ) {
    at += decodeSegment(bytes, at).byteLength;
    starts.push(at);
  }
  return starts;
}

describe('range digests', () => {
  it('segment 0 and pair 0 in the entry; each segment the digest of the pair after it; none for one segment', () => {
    fc.assert(
      fc.property(recordsArb, (pool) => {
        const members = pool.map((_, i) => i);
        const { bytes, segment0End, digests } = encodePackedVariant(pool, members, 3);
        const starts = startsOf(bytes);
        const segments = starts.length - 1;
        expect(segments).toBe(Math.ceil(pool.length / SEGMENT_SIZE));
        expect(segment0End).toBe(starts[1]);
        if (segments === 1) {
          expect(digests).toBeUndefined();
          expect(decodeSegment(bytes, 0).nextPairDigest).toBeUndefined();
          return;
        }
        expect(digests).toEqual({
          segment0: digest128(bytes.subarray(0, starts[1])),
          pair0: digest128(bytes.subarray(0, starts[2])),
        });
        for (let s = 0; s < segments; s++) {
          const segment = decodeSegment(bytes, starts[s]!);
          if (s === segments - 1) expect(segment.nextPairDigest).toBeUndefined();
          else {
            expect(segment.next[0]).toBe(starts[s + 1]);
            expect(segment.nextPairDigest).toBe(digest128(bytes.subarray(segment.next[0], segment.next[2])));
          }
        }
        // The records read back are the records written.
        const decoded = decodePackedVariant(bytes, 3);
        expect(decoded.map((r) => r.bytes.toString())).toEqual(pool.map((r) => r.bytes.toString()));
      }),
      { numRuns: 40 },
    );
  });

  it('format 2 records no digests: no gap before the fragments, and the same records', () => {
    fc.assert(
      fc.property(recordsArb, (pool) => {
        const members = pool.map((_, i) => i);
        const old = encodePackedVariant(pool, members, 3, 2);
        const current = encodePackedVariant(pool, members, 3);
        expect(old.digests).toBeUndefined();
        const segments = Math.ceil(pool.length / SEGMENT_SIZE);
        expect(current.bytes.byteLength - old.bytes.byteLength).toBe((segments - 1) * PAIR_DIGEST_BYTES);
        for (let at = 0; at < old.bytes.byteLength; at += decodeSegment(old.bytes, at).byteLength)
          expect(decodeSegment(old.bytes, at).nextPairDigest).toBeUndefined();
        expect(decodePackedVariant(old.bytes, 3).map((r) => r.bytes.toString())).toEqual(
          decodePackedVariant(current.bytes, 3).map((r) => r.bytes.toString()),
        );
      }),
      { numRuns: 20 },
    );
  });
});
