/**
 * A data directory of `npm start` in which the fixture is already published, made once per `vitest run`: the
 * global set-up of the slow project (vitest.config.ts) starts `npm start` on a fresh data directory with no
 * seeded key, stops it once it is ready and leaves the directory behind for the suites that start `npm start` to
 * serve the fixture, not to watch its first publish (`publishedFixtureIn` in test/helpers/npm-start.ts copies
 * it). Each of them published the fixture's 883 objects itself before: about 5 s of CPU each, ten suites.
 *
 * The set-up does not wait: the suites start at once, and the first that needs the directory waits for it
 * (`ready` in the root, or `failed` with what npm start printed). Its teardown stops a start still running and
 * removes the root.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The root of the published fixture: `data/`, and `ready` or `failed` once it is made. */
    publishedFixture: string;
  }
}

const ROOT = join(import.meta.dirname, '..', '..');

/** The data directory inside `root`, and the files that say it is made or why it is not. */
export const fixturePaths = (root: string) => ({
  data: join(root, 'data'),
  ready: join(root, 'ready'),
  failed: join(root, 'failed'),
});

export default function setup(project: TestProject): () => Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'cat-published-fixture-'));
  const paths = fixturePaths(root);
  mkdirSync(paths.data);
  project.provide('publishedFixture', root);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', CATALOGUE_LOCAL_DIR: paths.data, CATALOGUE_DEV_KEYS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const gather = (chunk: Buffer) => {
    output += chunk;
    // Ready: the paste lines and the first request are printed last.
    if (/^Ctrl-C stops it\.$/m.test(output) && child.exitCode === null) child.kill('SIGTERM');
  };
  child.stdout!.on('data', gather);
  child.stderr!.on('data', gather);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      if (code === 0 && /^Ctrl-C stops it\.$/m.test(output)) writeFileSync(paths.ready, '');
      else writeFileSync(paths.failed, `npm start exited with ${code}:\n${output}`);
      resolve();
    });
  });
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(root, { recursive: true, force: true });
  };
}
