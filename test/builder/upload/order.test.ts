/** Which upload is the newest (builder/upload/order.ts): the later second S3 completed it in, then the name. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type ListedUpload, newerUpload, newestAfter } from '../../../builder/upload/order.js';

const at = (iso: string) => new Date(iso);
const upload = (key: string, iso: string): ListedUpload => ({
  key: `incoming/${key}`,
  lastModified: at(iso),
});

describe('newest upload', () => {
  it('a later second wins whatever the names; within a second, the later name', () => {
    expect(
      newerUpload(upload('a', '2026-06-01T12:00:01.000Z'), upload('z', '2026-06-01T12:00:00.900Z')),
    ).toBe(true);
    expect(
      newerUpload(upload('b', '2026-06-01T12:00:00.100Z'), upload('a', '2026-06-01T12:00:00.900Z')),
    ).toBe(true);
    expect(
      newerUpload(upload('a', '2026-06-01T12:00:00.900Z'), upload('b', '2026-06-01T12:00:00.100Z')),
    ).toBe(false);
    expect(newerUpload(upload('a', '2026-06-01T12:00:00Z'), upload('a', '2026-06-01T12:00:00Z'))).toBe(false);
  });

  it('newestAfter: nothing for the newest; else the newest of those newer', () => {
    const uploads = [
      upload('1', '2026-06-01T12:00:00Z'),
      upload('2', '2026-06-01T12:00:05Z'),
      upload('3', '2026-06-01T12:00:09Z'),
    ];
    expect(newestAfter(uploads[2]!, uploads)).toBeUndefined();
    expect(newestAfter(uploads[0]!, uploads)?.key).toBe('incoming/3');
  });

  it('is a strict total order over (second, name), so one upload of any burst is the newest', () => {
    const arbitrary = fc.uniqueArray(
      fc.record({ key: fc.stringMatching(/^[a-z0-9]{1,6}$/), second: fc.integer({ min: 0, max: 5 }) }),
      { minLength: 1, maxLength: 12, selector: (u) => u.key },
    );
    fc.assert(
      fc.property(arbitrary, (raw) => {
        const uploads = raw.map((u) => ({ key: u.key, lastModified: new Date(u.second * 1000 + 123) }));
        const newest = uploads.filter((u) => newestAfter(u, uploads) === undefined);
        expect(newest).toHaveLength(1);
        for (const other of uploads) {
          if (other !== newest[0]) expect(newestAfter(other, uploads)).toBe(newest[0]);
          expect(newerUpload(other, other)).toBe(false);
        }
      }),
    );
  });
});
