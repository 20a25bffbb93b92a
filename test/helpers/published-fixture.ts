/**
 * A data directory of `npm start` in which the fixture is already published, made at most once per `vitest
 * run`, for the suites that start `npm start` to serve the fixture, not to watch its first publish
 * (`publishedFixtureIn` in test/helpers/npm-start.ts copies it). Each of them published the fixture's 883 objects
 * itself before: about 5 s of CPU each, ten suites.
 *
 * The global set-up of the slow project (vitest.config.ts) only names the run's folder for it and removes it
 * when the run ends. The first suite that needs the directory claims the folder (a file created exclusively)
 * and makes it: `npm start` on a fresh data directory with no seeded key, stopped once it is ready. The others
 * wait for `ready`, or `failed` with what npm start printed. A run that needs none makes none.
 */
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { errorMessage } from '../../store/errors.js';
import { spawnStart } from './start-process.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's folder for the published fixture: `data/`, and `claimed`, then `ready` or `failed`. */
    publishedFixture: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = mkdtempSync(join(tmpdir(), 'cat-published-fixture-'));
  project.provide('publishedFixture', root);
  return () => rmSync(root, { recursive: true, force: true });
}

/** The published fixture's data directory in `root`, made by the first caller and waited for by the others. */
export async function publishedFixture(root: string, waitMs = 180_000): Promise<string> {
  const paths = {
    data: join(root, 'data'),
    claimed: join(root, 'claimed'),
    ready: join(root, 'ready'),
    failed: join(root, 'failed'),
  };
  if (claim(paths.claimed)) {
    // Whatever stops the maker, the others learn it at once rather than when their wait runs out.
    await make(paths).catch((error: unknown) => writeFileSync(paths.failed, errorMessage(error)));
  }
  for (const until = Date.now() + waitMs; !existsSync(paths.ready) && !existsSync(paths.failed); ) {
    if (Date.now() > until) throw new Error(`the published fixture was not made within ${waitMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (existsSync(paths.failed)) throw new Error(readFileSync(paths.failed, 'utf8'));
  return paths.data;
}

/** Whether this caller is the first: the file is created exclusively. */
function claim(file: string): boolean {
  try {
    closeSync(openSync(file, 'wx'));
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** npm start on a fresh data directory, stopped once ready: `ready`, or `failed` with what it printed. */
async function make(paths: { data: string; ready: string; failed: string }): Promise<void> {
  mkdirSync(paths.data);
  const { child, output } = spawnStart(paths.data, { CATALOGUE_DEV_KEYS: '' });
  // Ready: the paste lines and the first request are printed last.
  const ready = () => /^Ctrl-C stops it\.$/m.test(output());
  const stopOnceReady = () => {
    if (ready() && child.exitCode === null) child.kill('SIGTERM');
  };
  child.stdout!.on('data', stopOnceReady);
  child.stderr!.on('data', stopOnceReady);
  return new Promise<void>((resolve) => {
    child.once('exit', (code) => {
      if (code === 0 && ready()) writeFileSync(paths.ready, '');
      else writeFileSync(paths.failed, `npm start exited with ${code}:\n${output()}`);
      resolve();
    });
  });
}
