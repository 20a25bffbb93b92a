/**
 * `npm start` as the tests run it: `node --import tsx local/start.ts` (what `npm start` runs) on an ephemeral
 * port and a data directory of the test's, until its ready lines; then stopped with SIGTERM, as Ctrl-C would.
 */
import type { ChildProcess } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { request } from 'undici';
import { afterAll, inject, vi } from 'vitest';
import { ENDPOINTS_FILE } from '../../aws/local-stack.js';
import { main as catalogueCli } from '../../builder/cli.js';
import { publishedFixture } from './published-fixture.js';
import { spawnStart } from './start-process.js';

/** Test keys for CATALOGUE_DEV_KEYS; never real ones. */
export const FREE = 'pk_live_AAAAAAAAAAAAAAAAAAAAAA';
export const PARTNER = 'pk_live_BBBBBBBBBBBBBBBBBBBBBB';

export interface Started {
  child: ChildProcess;
  base: string;
  freshKey: string;
  /** The endpoint of its own S3 server, from the ready lines. */
  s3Endpoint: string;
  /** The `export NAME=value` lines it printed to paste into another shell, as name → value. */
  exports: Record<string, string>;
  output: () => string;
}

/**
 * Fill `local`, a new data directory, with the run's published fixture (test/helpers/published-fixture.ts, made
 * by the first suite that asks): npm start on it serves the fixture at once, without publishing it, on ports
 * chosen anew as in any new data directory. For the suites that start npm start to use what it serves, not to
 * watch its first publish. `local`, for chaining.
 */
export async function publishedFixtureIn(local: string): Promise<string> {
  const data = await publishedFixture(inject('publishedFixture'));
  cpSync(data, local, { recursive: true, filter: (source) => basename(source) !== ENDPOINTS_FILE });
  return local;
}

/**
 * A suite of `npm start`s: temporary directories (`directory(label)`) removed once the suite ends (within
 * `cleanupMs`), and `start(env)` on the suite's data directory `local` unless `env` names another. With
 * `published`, `local` holds the published fixture before the first start (`publishedFixtureIn`).
 */
export function npmStartSuite(label: string, options: { cleanupMs?: number; published?: boolean } = {}) {
  const temporary: string[] = [];
  const directory = (name: string) => {
    const made = mkdtempSync(join(tmpdir(), `cat-${name}-`));
    temporary.push(made);
    return made;
  };
  const local = directory(label);
  afterAll(() => {
    for (const made of temporary) rmSync(made, { recursive: true, force: true });
  }, options.cleanupMs);
  let filled: Promise<unknown> | undefined;
  const start = async (env: Record<string, string> = {}, readyWithinMs?: number): Promise<Started> => {
    const into = env.CATALOGUE_LOCAL_DIR ?? local;
    if (options.published && into === local) {
      filled ??= publishedFixtureIn(local);
      await filled;
    }
    return startNpm(into, env, readyWithinMs);
  };
  return { directory, local, start };
}

/** Start it on `local` with CATALOGUE_DEV_KEYS seeding FREE and PARTNER (and `env`), until it is ready. */
export function startNpm(
  local: string,
  env: Record<string, string> = {},
  readyWithinMs = 120_000,
): Promise<Started> {
  const { child, output } = spawnStart(local, {
    CATALOGUE_DEV_KEYS: `free:${FREE},partner:${PARTNER}`,
    ...env,
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      // Not left running behind a failed test.
      child.kill('SIGKILL');
      reject(new Error(`not ready in time:\n${output()}`));
    }, readyWithinMs);
    const poll = setInterval(() => {
      const out = output();
      const url = /http:\/\/127\.0\.0\.1:(\d+)\/v1/.exec(out);
      const key = /dev key \([^)]+\): (pk_live_[A-Za-z0-9_-]{22})/.exec(out);
      const s3 = /Local S3: (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (url && key && out.includes('curl')) {
        clearInterval(poll);
        clearTimeout(timer);
        // The paste lines come before the curl line: all three are there.
        const exports = Object.fromEntries(
          [...out.matchAll(/^ {2}export (CATALOGUE_\w+)=(\S+)$/gm)].map((match) => [match[1]!, match[2]!]),
        );
        resolve({ child, base: url[0], freshKey: key[1]!, s3Endpoint: s3?.[1] ?? '', exports, output });
      }
    }, 100);
    child.once('exit', (code) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`exited with ${code}:\n${output()}`));
    });
  });
}

/** Run it on `local`, expecting it to exit by itself: its exit code, its output and how long it took. */
export function runToExit(
  local: string,
  env: Record<string, string>,
): Promise<{ code: number | null; output: string; ms: number }> {
  const begun = performance.now();
  const { child, output } = spawnStart(local, env);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve({ code, output: output(), ms: performance.now() - begun }));
  });
}

export async function stop(started: Started): Promise<number> {
  const begun = performance.now();
  const exited = new Promise((resolve) => started.child.once('exit', resolve));
  started.child.kill('SIGTERM');
  await exited;
  return performance.now() - begun;
}

export async function get(url: string, key: string) {
  const response = await request(url, { headers: { authorization: `Bearer ${key}` } });
  return { status: response.statusCode, body: await response.body.text() };
}

/** Publish `source` into a running start's bucket exactly as its printed hint line does; the CLI's exit code. */
export async function publishInto(started: Started, source: string): Promise<number> {
  const quiet = [
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true),
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
  ];
  try {
    return await catalogueCli([
      'build',
      '--source',
      source,
      '--out',
      's3://catalogue',
      '--endpoint',
      started.s3Endpoint,
    ]);
  } finally {
    for (const spy of quiet) spy.mockRestore();
  }
}
