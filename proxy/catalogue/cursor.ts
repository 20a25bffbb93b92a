/**
 * Cursors: opaque base64url; bound by an HMAC to the variant key; they pin the variant's object, so a walk
 * sees one published version. The check that needs no read: format, HMAC and the variant the cursor was made for. `OPTIONS` on a
 * list answers from it, so a tampered cursor is 400 for OPTIONS as for GET and HEAD (which check the same
 * thing, then read the page the cursor pins).
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type ApiError, apiError } from '../http/errors.js';
import type { Plan } from '../request/plan.js';

export interface CursorState {
  objectId: string;
  /** Record offset of the page the cursor asks for. */
  offset: number;
  /** Absolute byte range [rangeStart, rangeEnd) of the object holding the segments of that page. */
  rangeStart: number;
  rangeEnd: number;
  /**
   * The digest (store/layout.ts digest128, base64url) the bytes of that range must have, as the object format
   * records it (store/segments.ts); undefined for a range of a format-2 object, which records none.
   */
  digest?: string | undefined;
}

/**
 * Version 2 carries the digest of its range; version 1 (before format 3) carries none. Both are read, so
 * walks begun before an upgrade go on; a version-1 cursor is only made for a format-2 object.
 */
const CURSOR_VERSION = 2;
const UNVERIFIED_CURSOR_VERSION = 1;
const CURSOR_MAC_BYTES = 16;
const DIGEST_BYTES = 16;
const STATE_BYTES = 1 + 16 + 12;
const CURSOR_BYTES = {
  [CURSOR_VERSION]: STATE_BYTES + DIGEST_BYTES,
  [UNVERIFIED_CURSOR_VERSION]: STATE_BYTES,
};

function cursorMac(secret: string, payload: Buffer, variant: string): Buffer {
  return createHmac('sha256', secret).update(payload).update(variant).digest().subarray(0, CURSOR_MAC_BYTES);
}

export function encodeCursor(state: CursorState, variant: string, secret: string): string {
  const version = state.digest === undefined ? UNVERIFIED_CURSOR_VERSION : CURSOR_VERSION;
  const payload = Buffer.alloc(CURSOR_BYTES[version]);
  payload.writeUInt8(version, 0);
  Buffer.from(state.objectId, 'base64url').copy(payload, 1);
  payload.writeUInt32LE(state.offset, 17);
  payload.writeUInt32LE(state.rangeStart, 21);
  payload.writeUInt32LE(state.rangeEnd, 25);
  if (state.digest !== undefined) Buffer.from(state.digest, 'base64url').copy(payload, STATE_BYTES);
  return Buffer.concat([payload, cursorMac(secret, payload, variant)]).toString('base64url');
}

/** Decode a cursor for `variant`; `undefined` when it is malformed, altered or made for another variant. */
export function decodeCursor(cursor: string, variant: string, secret: string): CursorState | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  const version = bytes[0];
  if (version !== CURSOR_VERSION && version !== UNVERIFIED_CURSOR_VERSION) return undefined;
  const payloadBytes = CURSOR_BYTES[version];
  if (bytes.byteLength !== payloadBytes + CURSOR_MAC_BYTES || bytes.toString('base64url') !== cursor)
    return undefined;
  const payload = bytes.subarray(0, payloadBytes);
  const mac = bytes.subarray(payloadBytes);
  if (!timingSafeEqual(mac, cursorMac(secret, payload, variant))) return undefined;
  const state: CursorState = {
    objectId: payload.subarray(1, 17).toString('base64url'),
    offset: payload.readUInt32LE(17),
    rangeStart: payload.readUInt32LE(21),
    rangeEnd: payload.readUInt32LE(25),
  };
  if (version === CURSOR_VERSION) state.digest = payload.toString('base64url', STATE_BYTES);
  if (state.offset === 0 || state.rangeEnd <= state.rangeStart) return undefined;
  return state;
}

/** The message of a cursor that is not valid for its query (the reader answers with the same words). */
export const INVALID_CURSOR_MESSAGE =
  'cursor is not valid for this query: pass page.next_cursor back unchanged, with the same filters and sort.';

/**
 * The error for a plan's cursor, or `undefined` when there is none or it is intact and made for this query.
 * @example cursorError({ kind: 'list', cursor: 'x', variant: 'modules', … }, secret) // → invalid_parameter
 * @example cursorError({ kind: 'detail', … }, secret) // → undefined
 */
export function cursorError(plan: Plan, cursorSecret: string): ApiError | undefined {
  if (plan.kind !== 'list' || plan.cursor === undefined) return undefined;
  return decodeCursor(plan.cursor, plan.variant, cursorSecret)
    ? undefined
    : apiError('invalid_parameter', INVALID_CURSOR_MESSAGE);
}
