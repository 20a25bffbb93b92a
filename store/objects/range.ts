/** Byte-range rules shared by every object store, so all three answer the same way. */
import { DependencyError } from '../errors.js';

/**
 * Clamp `[start, end)` to an object of `size` bytes, as S3 does for a range running past the end.
 * An empty range is a caller bug; a range starting at or past the end means the index and the stored
 * objects disagree, which is an origin fault (S3 answers 416), never something a consumer caused.
 * @example clampRange([10, 500], 100) // → [10, 100]
 */
export function clampRange(range: readonly [number, number], size: number): [number, number] {
  const [start, end] = range;
  checkRange(range);
  if (start >= size) throw new DependencyError('objects', `range ${start}-${end} is past the end (${size})`);
  return [start, Math.min(end, size)];
}

/**
 * Throws a RangeError unless `[start, end)` is a non-empty range of non-negative integers.
 * @example checkRange([0, 0]) // throws: an empty range is a caller bug
 */
export function checkRange([start, end]: readonly [number, number]): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end <= start) {
    throw new RangeError(`invalid byte range [${start}, ${end})`);
  }
}
