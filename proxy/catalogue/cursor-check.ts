/**
 * The cursor check that needs no read: format, HMAC and the variant the cursor was made for. `OPTIONS` on a
 * list answers from it, so a tampered cursor is 400 for OPTIONS as for GET and HEAD (which check the same
 * thing, then read the page the cursor pins).
 */
import { type ApiError, apiError } from '../core/errors.js';
import type { Plan } from '../core/plan.js';
import { decodeCursor } from '../format.js';

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
