/** Small numeric helpers for the tables. */

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of a sorted sample. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** Least-squares slope of y over x. */
export function slope(points: readonly { x: number; y: number }[]): number {
  const n = points.length;
  if (n < 2) return 0;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  let num = 0;
  let den = 0;
  for (const p of points) {
    num += (p.x - mx) * (p.y - my);
    den += (p.x - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

export const fmt = {
  int: (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '–'),
  ms: (n: number) => (Number.isFinite(n) ? (n < 10 ? n.toFixed(2) : n.toFixed(1)) : '–'),
  s: (n: number) => (Number.isFinite(n) ? n.toFixed(1) : '–'),
  pct: (n: number) => (Number.isFinite(n) ? `${(n * 100).toFixed(0)} %` : '–'),
  x: (n: number) => (Number.isFinite(n) ? `${n.toFixed(2)}×` : '–'),
  mb: (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 1e6).toFixed(1)} MB` : '–'),
  mib: (bytes: number) => (Number.isFinite(bytes) ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : '–'),
  usd: (n: number) => (Number.isFinite(n) ? `$${n < 0.01 ? n.toFixed(4) : n.toFixed(3)}` : '–'),
};

/** A Markdown table. */
export function table(head: string[], rows: (string | number)[][]): string {
  const line = (cells: (string | number)[]) =>
    `| ${cells.map((c) => String(c).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n');
}
