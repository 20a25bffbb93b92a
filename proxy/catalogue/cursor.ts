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
}

const CURSOR_VERSION = 1;
const CURSOR_MAC_BYTES = 16;
const CURSOR_BYTES = 1 + 16 + 12 + CURSOR_MAC_BYTES;

function cursorMac(secret: string, payload: Buffer, variant: string): Buffer {
  return createHmac('sha256', secret).update(payload).update(variant).digest().subarray(0, CURSOR_MAC_BYTES);
}

export function encodeCursor(state: CursorState, variant: string, secret: string): string {
  const payload = Buffer.alloc(CURSOR_BYTES - CURSOR_MAC_BYTES);
  payload.writeUInt8(CURSOR_VERSION, 0);
  Buffer.from(state.objectId, 'base64url').copy(payload, 1);
  payload.writeUInt32LE(state.offset, 17);
  payload.writeUInt32LE(state.rangeStart, 21);
  payload.writeUInt32LE(state.rangeEnd, 25);
  return Buffer.concat([payload, cursorMac(secret, payload, variant)]).toString('base64url');
}

/** Decode a cursor for `variant`; `undefined` when it is malformed, altered or made for another variant. */
export function decodeCursor(cursor: string, variant: string, secret: string): CursorState | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) return undefined;
  const bytes = Buffer.from(cursor, 'base64url');
  if (bytes.byteLength !== CURSOR_BYTES || bytes.toString('base64url') !== cursor) return undefined;
  const payload = bytes.subarray(0, CURSOR_BYTES - CURSOR_MAC_BYTES);
  const mac = bytes.subarray(CURSOR_BYTES - CURSOR_MAC_BYTES);
  if (!timingSafeEqual(mac, cursorMac(secret, payload, variant))) return undefined;
  if (payload.readUInt8(0) !== CURSOR_VERSION) return undefined;
  const state = {
    objectId: payload.subarray(1, 17).toString('base64url'),
    offset: payload.readUInt32LE(17),
    rangeStart: payload.readUInt32LE(21),
    rangeEnd: payload.readUInt32LE(25),
  };
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
