/**
 * Bench settings, all overridable from the environment so a development run can be short:
 *   BENCH_MODULES=2000 BENCH_SECONDS=3 BENCH_SOAK_SECONDS=10 npm run bench
 */
import { fileURLToPath } from 'node:url';

export const REPO = fileURLToPath(new URL('../', import.meta.url));
export const BENCH_DIR = fileURLToPath(new URL('./', import.meta.url));
/** Git-ignored scratch space: snapshots, build output, s3rver/dynalite data, profiles. */
export const WORK = fileURLToPath(new URL('.work/', import.meta.url));

/** A key of the wire format, used only against the bench's own loopback servers. */
export const BENCH_KEY = `pk_live_${'B'.repeat(22)}`;
export const CURSOR_SECRET = 'bench-cursor-secret-of-at-least-32-characters';
/** Partner limits so large that the meter never refuses during a run. */
export const HUGE_LIMITS = { minute: 1_000_000_000, month: 1_000_000_000_000 };

/** Names in the local stack (s3rver bucket, dynalite tables). */
export const STACK_TABLES = { keysTable: 'bench-keys', countersTable: 'bench-counters' };
export const STACK_BUCKET = 'bench-catalogue';
export const STACK_PREFIX = 'catalogue/';

export type Section = 1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10 | 11 | 12 | 13 | 14 | 15;
export const SECTIONS: readonly Section[] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15];

export interface Settings {
  modules: number;
  seed: number;
  /** Seconds of each measured load run. */
  seconds: number;
  /** Seconds of the warm-up run before a server's first measured run. */
  warmupSeconds: number;
  /** Measured runs per server; medians are reported. */
  rounds: number;
  /**
   * Section 2's rounds and their length: the same time per server as `rounds` × `seconds`, in shorter
   * alternating rounds, so a burst of the host's other work spoils one pair of rounds, not a third of them.
   */
  coreRounds: number;
  coreSeconds: number;
  /** Modules of the large catalogue of section 7 (full and incremental build, cold start); 0 skips it. */
  scaleModules: number;
  /** Full builds (each into an empty directory) and one-module incremental publishes; medians reported. */
  fullBuilds: number;
  incrementalBuilds: number;
  connections: number;
  soakSeconds: number;
  /** Seconds between heap samples of the soak (and RSS samples of section 15). */
  soakSampleSeconds: number;
  /** Section 14: seconds of load on npm start (its acceptance run: 3600). */
  npmSoakSeconds: number;
  /** `full`: publish the whole catalogue into s3rver with the CLI; `mix`: only the objects the e2e mix reads. */
  s3Publish: 'full' | 'mix';
  /** `auto`: profile only where a target is missed. */
  profile: 'auto' | 'always' | 'never';
  sections: Set<Section>;
  /** Keep the large build output and server data under .work after the run. */
  keep: boolean;
  /**
   * Another checkout of the project (BENCH_CORE_BASE): its proxy core runs beside this one in section 2, over
   * the same catalogue, in the same alternating rounds — a change's before and after in one run.
   */
  coreBase: string | undefined;
  out: string;
}

function integer(name: string, fallback: number, min: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < min)
    throw new Error(`${name}=${raw}: expected an integer ≥ ${min}`);
  return value;
}

function choice<T extends string>(name: string, values: readonly T[], fallback: T): T {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  if (!(values as readonly string[]).includes(raw))
    throw new Error(`${name}=${raw}: expected ${values.join('|')}`);
  return raw as T;
}

export function loadSettings(): Settings {
  const modules = integer('BENCH_MODULES', 25_000, 10);
  const seconds = integer('BENCH_SECONDS', 10, 1);
  // Short development runs (BENCH_SECONDS < 5) measure each server once; real runs three times.
  const rounds = integer('BENCH_ROUNDS', seconds >= 5 ? 3 : 1, 1);
  const coreRounds = integer('BENCH_CORE_ROUNDS', seconds >= 5 ? 10 : 1, 1);
  const sections = new Set<Section>();
  for (const part of (process.env.BENCH_SECTIONS ?? SECTIONS.join(',')).split(',')) {
    const n = Number(part.trim());
    if (!(SECTIONS as readonly number[]).includes(n))
      throw new Error(`BENCH_SECTIONS: ${part} is not a section (1-${SECTIONS.length})`);
    sections.add(n as Section);
  }
  return {
    modules,
    seed: integer('BENCH_SEED', 1, -(2 ** 31)),
    seconds,
    warmupSeconds: integer('BENCH_WARMUP_SECONDS', Math.max(1, Math.round(seconds / 3)), 0),
    rounds,
    coreRounds,
    coreSeconds: integer('BENCH_CORE_SECONDS', Math.max(1, Math.round((rounds * seconds) / coreRounds)), 1),
    scaleModules: integer('BENCH_SCALE_MODULES', 100_000, 0),
    fullBuilds: integer('BENCH_FULL_BUILDS', seconds >= 5 ? 2 : 1, 1),
    incrementalBuilds: integer('BENCH_INCREMENTAL_BUILDS', seconds >= 5 ? 3 : 1, 1),
    connections: integer('BENCH_CONNECTIONS', 10, 1),
    soakSeconds: integer('BENCH_SOAK_SECONDS', 300, 1),
    soakSampleSeconds: integer('BENCH_SOAK_SAMPLE_SECONDS', 10, 1),
    npmSoakSeconds: integer('BENCH_NPM_SOAK_SECONDS', 600, 1),
    s3Publish: choice('BENCH_S3_PUBLISH', ['full', 'mix'], modules >= 25_000 ? 'full' : 'mix'),
    // Development runs skip profiling unless asked; real runs profile wherever a target is missed.
    profile: choice('BENCH_PROFILE', ['auto', 'always', 'never'], seconds >= 5 ? 'auto' : 'never'),
    sections,
    keep: process.env.BENCH_KEEP === '1',
    coreBase: process.env.BENCH_CORE_BASE?.trim() || undefined,
    out: process.env.BENCH_OUT?.trim() || `${BENCH_DIR}RESULTS.md`,
  };
}

/** The environment variables that were set for this run (for the "exact command" line). */
export function benchEnv(): string {
  return Object.entries(process.env)
    .filter(([name]) => name.startsWith('BENCH_'))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join(' ');
}
