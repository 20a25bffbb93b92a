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
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { spawnStart } from './start-process.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The root of the published fixture: `data/`, and `ready` or `failed` once it is made. */
    publishedFixture: string;
  }
}

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
  const { child, output } = spawnStart(paths.data, { CATALOGUE_DEV_KEYS: '' });
  // Ready: the paste lines and the first request are printed last.
  const ready = () => /^Ctrl-C stops it\.$/m.test(output());
  const stopOnceReady = () => {
    if (ready() && child.exitCode === null) child.kill('SIGTERM');
  };
  child.stdout!.on('data', stopOnceReady);
  child.stderr!.on('data', stopOnceReady);
  const exited = new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      if (code === 0 && ready()) writeFileSync(paths.ready, '');
      else writeFileSync(paths.failed, `npm start exited with ${code}:\n${output()}`);
      resolve();
    });
  });
  return async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
    rmSync(root, { recursive: true, force: true });
  };
}
