import { describe, expect, it } from 'vitest';
import { composeDetail, composeListPage, nextPageState } from '../../../proxy/catalogue/compose.js';
import type { CursorState } from '../../../proxy/catalogue/cursor.js';
import { digest128 } from '../../../store/layout.js';
import {
  decodeSegment,
  encodeVariant,
  FormatError,
  fragment,
  type RecordFragments,
} from '../../../store/segments.js';

/** Records `{id, name, extra}` with three fragments each. */
function records(count: number): RecordFragments[] {
  return Array.from({ length: count }, (_, i) => [
    fragment('id', String(i + 1)),
    fragment('name', JSON.stringify(`n${i + 1}`)),
    fragment('extra', JSON.stringify({ deep: [i] })),
  ]);
}

interface Walked {
  ids: number[];
  pages: number;
}

/** Walk a variant like a client, reading exactly the ranges the cursors name; `limits` cycle per page. */
function walk(object: Buffer, segment0End: number, limits: number[], mask = 0b111): Walked {
  const ids: number[] = [];
  let state: CursorState | undefined;
  let pages = 0;
  for (;;) {
    const limit = limits[pages % limits.length]!;
    const [start, end] = state ? [state.rangeStart, state.rangeEnd] : [0, segment0End];
    let next: CursorState | undefined;
    const body = composeListPage(
      {
        bytes: object.subarray(start, end),
        rangeStart: start,
        objectId: 'x',
        offset: state?.offset ?? 0,
        limit,
        mask,
      },
      (s) => {
        next = s;
        return 'CURSOR';
      },
    );
    const parsed = JSON.parse(body.toString()) as {
      data: { id: number }[];
      page: { next_cursor: string | null };
    };
    expect(parsed.data.length).toBeLessThanOrEqual(limit);
    ids.push(...parsed.data.map((r) => r.id));
    pages++;
    expect(parsed.page.next_cursor).toBe(next ? 'CURSOR' : null);
    if (!next) return { ids, pages };
    state = next;
  }
}

describe('composeListPage: walks', () => {
  it.each([1, 2, 99, 100, 101, 199, 200, 201, 250, 301])(
    'a variant of %i records walks completely for every limit pattern',
    (count) => {
      const { bytes, segment0End } = encodeVariant(records(count), 3);
      const all = Array.from({ length: count }, (_, i) => i + 1);
      for (const limits of [[1], [7], [50], [99], [100], [100, 1], [3, 100, 42], [100, 99, 98]]) {
        const walked = walk(bytes, segment0End, limits);
        expect(walked.ids).toEqual(all);
      }
    },
  );

  it('keeps only the fragments of the mask, in schema order', () => {
    const { bytes, segment0End } = encodeVariant(records(3), 3);
    const body = composeListPage(
      {
        bytes: bytes.subarray(0, segment0End),
        rangeStart: 0,
        objectId: 'x',
        offset: 0,
        limit: 2,
        mask: 0b101,
      },
      () => 'c',
    );
    expect(body.toString()).toBe(
      '{"data":[{"id":1,"extra":{"deep":[0]}},{"id":2,"extra":{"deep":[1]}}],"page":{"next_cursor":"c"}}',
    );
  });

  it('an exact last page has next_cursor null', () => {
    const { bytes, segment0End } = encodeVariant(records(4), 3);
    const body = composeListPage(
      { bytes: bytes.subarray(0, segment0End), rangeStart: 0, objectId: 'x', offset: 0, limit: 4, mask: 1 },
      () => 'c',
    );
    expect(body.toString()).toBe(
      '{"data":[{"id":1},{"id":2},{"id":3},{"id":4}],"page":{"next_cursor":null}}',
    );
  });

  it('refuses bytes that are not the page asked for', () => {
    const { bytes } = encodeVariant(records(250), 3);
    const seg0 = decodeSegment(bytes, 0);
    const page = { bytes, rangeStart: 0, objectId: 'x', limit: 10, mask: 1 };
    expect(() => composeListPage({ ...page, offset: 150 }, () => 'c')).toThrow(FormatError);
    expect(() => composeListPage({ ...page, bytes: bytes.subarray(5), offset: 0 }, () => 'c')).toThrow(
      FormatError,
    );
    expect(() =>
      composeListPage({ ...page, bytes: bytes.subarray(0, seg0.byteLength), offset: 95 }, () => 'c'),
    ).toThrow(FormatError);
  });

  it('a next page in the same segment reads this segment and the next; otherwise the next two', () => {
    const { bytes } = encodeVariant(records(350), 3);
    const seg1 = decodeSegment(bytes, decodeSegment(bytes, 0).next[0], 0);
    // The digest of the range this page read (a pair) goes on to a page in the same segment; the next pair's
    // digest is the one the segment records, and it is the digest of exactly the bytes that page reads.
    const pairDigest = digest128(bytes.subarray(seg1.start, seg1.next[1]));
    expect(nextPageState({ objectId: 'x', pairDigest }, seg1, 150)).toEqual({
      objectId: 'x',
      offset: 150,
      rangeStart: seg1.start,
      rangeEnd: seg1.next[1],
      digest: pairDigest,
    });
    expect(nextPageState({ objectId: 'x', pairDigest }, seg1, 200)).toEqual({
      objectId: 'x',
      offset: 200,
      rangeStart: seg1.next[0],
      rangeEnd: seg1.next[2],
      digest: digest128(bytes.subarray(seg1.next[0], seg1.next[2])),
    });
    // An object of format 2 records no digests: its cursors carry none.
    expect(nextPageState({ objectId: 'x' }, seg1, 200).digest).toBeUndefined();
  });
});

describe('composeDetail', () => {
  it('wraps the one record in data', () => {
    const { bytes } = encodeVariant(records(1), 3);
    expect(composeDetail(bytes, 0b011).toString()).toBe('{"data":{"id":1,"name":"n1"}}');
  });

  it('refuses an object of several records', () => {
    const { bytes } = encodeVariant(records(2), 3);
    expect(() => composeDetail(bytes, 1)).toThrow(FormatError);
  });
});
