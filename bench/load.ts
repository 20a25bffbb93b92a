/**
 * The load generator: autocannon 9, programmatic, in the parent process (every server is a child process).
 * Latencies are taken from autocannon's per-response event at full resolution (its own histogram keeps
 * whole milliseconds), for every status — 304s included.
 */
import { createRequire } from 'node:module';
import { percentile } from './stats.js';

const autocannon = createRequire(import.meta.url)('autocannon') as (
  options: Record<string, unknown>,
  done: (error: Error | null, result: AutocannonResult) => void,
) => {
  on(event: 'response', listener: (client: unknown, status: number, bytes: number, ms: number) => void): void;
};

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
}

export interface LoadRequest {
  path: string;
  headers?: Record<string, string>;
}

export interface LoadResult {
  requests: number;
  seconds: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  statuses: Record<string, number>;
  bytes: number;
  /** CPU the load generator (this process) used, as a share of one core: near 100 % it is the limit. */
  generatorCpu: number;
}

export interface LoadOptions {
  port: number;
  requests: readonly LoadRequest[];
  seconds: number;
  connections: number;
  headers?: Record<string, string>;
}

export function runLoad(options: LoadOptions): Promise<LoadResult> {
  let latencies = new Float64Array(1 << 16);
  let count = 0;
  let bytes = 0;
  const statuses: Record<string, number> = {};
  const cpuBefore = process.cpuUsage();
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: `http://127.0.0.1:${options.port}`,
        connections: options.connections,
        duration: options.seconds,
        headers: options.headers ?? {},
        requests: options.requests.map((r) => ({ method: 'GET', path: r.path, headers: r.headers ?? {} })),
        timeout: 30,
      },
      (error, result) => {
        if (error) {
          reject(error);
          return;
        }
        const cpu = process.cpuUsage(cpuBefore);
        const sorted = latencies.slice(0, count).sort();
        resolve({
          requests: count,
          seconds: result.duration,
          rps: count / result.duration,
          p50: percentile(sorted, 50),
          p90: percentile(sorted, 90),
          p99: percentile(sorted, 99),
          max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN,
          errors: result.errors,
          timeouts: result.timeouts,
          statuses,
          bytes,
          generatorCpu: (cpu.user + cpu.system) / 1e6 / result.duration,
        });
      },
    );
    instance.on('response', (_client, status, responseBytes, ms) => {
      if (count === latencies.length) {
        const grown = new Float64Array(latencies.length * 2);
        grown.set(latencies);
        latencies = grown;
      }
      latencies[count++] = ms;
      bytes += responseBytes;
      statuses[status] = (statuses[status] ?? 0) + 1;
    });
  });
}

/** Statuses other than the expected ones, as `503×12, 500×1` (empty when none). */
export function unexpected(result: LoadResult, expected: readonly number[]): string {
  return Object.entries(result.statuses)
    .filter(([status]) => !expected.includes(Number(status)))
    .map(([status, n]) => `${status}×${n}`)
    .join(', ');
}
