/**
 * A log line's time: under load many lines share a millisecond, and formatting a date costs more than the
 * rest of the line, so the text of the last millisecond is kept.
 */
let isoMs = Number.NaN;
let isoText = '';

/**
 * `date.toISOString()`, worked out once per millisecond.
 * @example isoTime(new Date(0)) // → '1970-01-01T00:00:00.000Z'
 */
export function isoTime(date: Date): string {
  const ms = date.getTime();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = date.toISOString();
  }
  return isoText;
}

/**
 * The milliseconds since the epoch of `text` (an ISO time): no parsing when it is the last {@link isoTime} gave.
 * @example isoMillis('1970-01-01T00:00:01.000Z') === 1000
 */
export function isoMillis(text: string): number {
  return text === isoText ? isoMs : Date.parse(text);
}

/**
 * A request line's `latency_ms`: the milliseconds since `receivedAt` (a `performance.now()` time: when the
 * adapter met the request), to a tenth.
 * @example latencySince(performance.now() - 12.345) // → 12.3 (or a tenth more, the time this call took)
 */
export function latencySince(receivedAt: number): number {
  return Math.round((performance.now() - receivedAt) * 10) / 10;
}
