/**
 * Response bodies composed from stored bytes: slices of pre-serialised record fragments, concatenated once.
 * Nothing here parses or serialises catalogue data.
 */

import { decodeSegment, FormatError, SEGMENT_SIZE, type Segment } from '../../store/segments.js';
import type { CursorState } from './cursor.js';

export const EMPTY_LIST_BODY = Buffer.from('{"data":[],"page":{"next_cursor":null}}');

const LIST_OPEN = Buffer.from('{"data":[');
const LIST_CLOSE_NEXT = Buffer.from('],"page":{"next_cursor":');
const LIST_END = Buffer.from('}}');
const NULL = Buffer.from('null');
const QUOTE = Buffer.from('"');
const COMMA = Buffer.from(',');
const DETAIL_OPEN = Buffer.from('{"data":');
const DETAIL_CLOSE = Buffer.from('}');

const RECORD_OPEN = Buffer.from('{');
const RECORD_CLOSE = Buffer.from('}');

/**
 * Push the bytes of record `r` of `segment` to `out`, keeping the fragments whose bit is set in `mask`
 * (bit k = fragment k of the record kind's schema), in schema order.
 */
export function pushRecord(out: Uint8Array[], segment: Segment, r: number, mask: number): void {
  out.push(RECORD_OPEN);
  let first = true;
  for (let k = 0; k < segment.fragmentsPerRecord; k++) {
    if ((mask & (1 << k)) === 0) continue;
    if (!first) out.push(COMMA);
    out.push(segment.fragment(r, k));
    first = false;
  }
  out.push(RECORD_CLOSE);
}

export interface PageRequest {
  /** Bytes of the variant's object from absolute offset `rangeStart`, starting with the page's segment. */
  bytes: Buffer;
  rangeStart: number;
  objectId: string;
  /** Record offset of the page in the variant. */
  offset: number;
  limit: number;
  mask: number;
  /**
   * The digest of the pair of segments starting with the page's segment ([start(k), end(k+1)), store/
   * segments.ts): a later page in the same segment reads exactly that range. Undefined for a format-2
   * object, which records no digests (its cursors then carry none either).
   */
  pairDigest?: string | undefined;
}

/**
 * The list envelope of records `offset … offset+limit-1`, read from the segment at the start of `bytes` and,
 * when the page runs past it, the segment right after it. `cursorFor` turns the next page's state into its
 * opaque cursor (it is only called when there is a next page).
 * Throws {@link FormatError} when the bytes are not the segments the page needs.
 * @example composeListPage({ bytes, rangeStart: 0, objectId, offset: 0, limit: 2, mask }, cursorFor)
 *   // → {"data":[{…},{…}],"page":{"next_cursor":"…"}}
 */
export function composeListPage(page: PageRequest, cursorFor: (state: CursorState) => string): Buffer {
  const { bytes, rangeStart, offset, limit, mask } = page;
  const first = decodeSegment(bytes, 0, rangeStart);
  if (first.index !== Math.floor(offset / SEGMENT_SIZE) || offset >= first.total) {
    throw new FormatError('the bytes do not hold the page asked for');
  }
  const end = Math.min(offset + limit, first.total);
  let second: Segment | undefined;
  const out: Uint8Array[] = [LIST_OPEN];
  for (let position = offset; position < end; position++) {
    if (position > offset) out.push(COMMA);
    const local = position - first.index * SEGMENT_SIZE;
    if (local < first.count) {
      pushRecord(out, first, local, mask);
      continue;
    }
    second ??= decodeSegment(bytes, first.byteLength, rangeStart);
    if (second.index !== first.index + 1) throw new FormatError('the page runs past the bytes read');
    pushRecord(out, second, local - first.count, mask);
  }
  out.push(LIST_CLOSE_NEXT);
  if (end < first.total) out.push(QUOTE, Buffer.from(cursorFor(nextPageState(page, first, end))), QUOTE);
  else out.push(NULL);
  out.push(LIST_END);
  return Buffer.concat(out);
}

/**
 * Where the page at record `offset` lives, seen from `segment` (the segment of the previous page's first
 * record): a page of at most {@link SEGMENT_SIZE} records spans its own segment and the next one. The range's
 * digest comes from what was verified already: the previous page's own pair, or the digest of the next pair
 * that `segment` records.
 * Throws {@link FormatError} when a verified object lacks the digest of its next pair.
 */
export function nextPageState(
  page: Pick<PageRequest, 'objectId' | 'pairDigest'>,
  segment: Segment,
  offset: number,
): CursorState {
  const { objectId, pairDigest } = page;
  if (Math.floor(offset / SEGMENT_SIZE) === segment.index) {
    return { objectId, offset, rangeStart: segment.start, rangeEnd: segment.next[1], digest: pairDigest };
  }
  if (pairDigest !== undefined && segment.nextPairDigest === undefined) {
    throw new FormatError('the segment records no digest of the next pair');
  }
  const digest = pairDigest === undefined ? undefined : segment.nextPairDigest;
  return { objectId, offset, rangeStart: segment.next[0], rangeEnd: segment.next[2], digest };
}

/**
 * The detail envelope `{"data":{record}}` of a detail object (one segment holding one record).
 * @example composeDetail(objectBytes, mask) // → {"data":{"id":7,"name":"…"}}
 */
export function composeDetail(bytes: Buffer, mask: number): Buffer {
  const segment = decodeSegment(bytes, 0);
  if (segment.count !== 1) throw new FormatError('a detail object holds exactly one record');
  const out: Uint8Array[] = [DETAIL_OPEN];
  pushRecord(out, segment, 0, mask);
  out.push(DETAIL_CLOSE);
  return Buffer.concat(out);
}
